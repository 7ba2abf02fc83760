// Kopf's 06-peering: a trivial handler; what the example shows is peering. Operators of the same
// peering see each other, and one of a higher priority (a developer's, with Kopf's `--dev`)
// freezes the others until it exits.
//
// Workaround: kobun has no `--dev` yet (issue 33); `--priority 666` is what it stands for.
import { Registry } from "kobun";
import { Journal, KopfExamples } from "../../kopf.ts";

export const registry = new Registry();
const { on } = registry;
export const journal = new Journal();

/** Kopf's `--dev`: the priority of a developer's operator. */
export const DEV_PRIORITY = 666;

on.create(KopfExamples, ({ name }) => journal.write(`created ${name}`), { id: "create_fn" });
