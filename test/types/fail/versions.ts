// Must NOT typecheck: each version has its own schema.
import { Registry } from "kobun";
import { Gadgets } from "../versions.ts";

const { on } = new Registry();
on.create(Gadgets, ({ spec }) => { void spec.size; }); // error TS2339: size is v1beta1's, not the storage version's
on.create(Gadgets.versions.v1beta1, ({ spec }) => { void spec.replicas; }); // error TS2339: replicas is v1's
on.create(Gadgets.versions.v2, () => undefined); // error TS2339: no such version
