// A handler for a resource that no API server serves: the operator must stop with exit code 5.
import { on } from "kobun";

on.create("nothings.example.com/v1", () => {}, { id: "never" });
