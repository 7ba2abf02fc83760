// Kopf's 06-peering: a trivial handler; what the example shows is peering. Operators of the same
// peering see each other, and one of a higher priority (a developer's, with Kopf's `--dev`)
// freezes the others until it exits: `kobun run --dev` (or `kobun dev --dev`), as `kopf run --dev`.
import { Registry } from "kobun";
import { KopfExamples } from "../../kopf.ts";

export const registry = new Registry();
const { on } = registry;

on.create(KopfExamples, ({ name, logger }) => logger.info(`created ${name}`), { id: "create_fn" });
