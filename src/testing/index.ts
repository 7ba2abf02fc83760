// testing/: the kit handler authors use in their own tests (`import { startOperator } from
// "kobun/testing"`), the equivalent of Kopf's KopfRunner with no cluster: a sandbox API server
// and the operator in-process, objects applied, conditions awaited on a watch.
//
//   import { startOperator } from "kobun/testing";
//   import { Examples } from "../handlers/example.ts";      // registers its handlers
//   await using kit = await startOperator();
//   await kit.apply(Examples, { metadata: { name: "hello" }, spec: { size: 1 } });
//   const done = await kit.until(Examples, "hello", (o) => o.status?.create_fn);
//
// Must never: poll (every wait is a watch); read the machine's kubeconfig (the sandbox writes
// its own); be imported by the runtime (it stands beside it: test/contracts/rooms.ts).

export {
  startOperator, TestOperator, type TestOperatorOptions, type WaitOptions, type Applied, type Named,
} from "./operator.ts";
export { UntilTimeoutError } from "./until.ts";
