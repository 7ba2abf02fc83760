// The errors from the rooms below that can end a command, for the CLI's mapping of every
// way of ending to an exit code (README: "Exit codes"). cli/ imports only runtime/ and
// config/ (test/contracts/rooms.ts); this is its door to them.

export { ApiError, ConnectionError } from "../kube/errors.ts";
export { KubeconfigError } from "../kube/kubeconfig.ts";
export { RegistrationError } from "../declaring/registration.ts";
