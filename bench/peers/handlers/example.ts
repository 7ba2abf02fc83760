// The handlers bench/real.ts compiles into its kobun binary: handlers/example.ts alone (create,
// update, delete), so that examples added beside it in handlers/ do not change what is measured.
import "../../../handlers/example.ts";
