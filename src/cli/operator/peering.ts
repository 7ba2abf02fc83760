// `kobun freeze` and `kobun resume`: a manual peering record for maintenance windows,
// like `kopf freeze` / `kopf resume`: every operator of lower priority freezes while it lasts.

import { ConfigError, configIssue, DEV_PRIORITY, UsageError } from "../../config/index.ts";
import { KubeClient } from "../../kube/index.ts";
import { freezeManually, isResourceMissing, peeringResource, resumeManually } from "../../peering/index.ts";
import { FatalError } from "../../runtime/exits.ts";
import { numberFlag, readFlags, stringFlag } from "../args.ts";

const FLAGS = {
  peering: { value: true }, namespace: { short: "n", value: true }, lifetime: { value: true },
  priority: { value: true }, dev: { value: false }, message: { value: true }, group: { value: true },
  kubeconfig: { value: true }, context: { value: true }, clusterwide: { value: false },
};

export const peeringHelp = `Usage:
  kobun freeze --peering NAME --lifetime SECONDS [--priority P | --dev] [--message TEXT] \
[-n NS | --clusterwide] [--group kobun.dev|kopf.dev]
  kobun resume --peering NAME [-n NS | --clusterwide] [--group ...]
Both also take --kubeconfig FILE and --context NAME; --peering is "default" when not given.
--dev is --priority ${DEV_PRIORITY}, as kobun run --dev's.`;

export async function peeringCommand(command: "freeze" | "resume", argv: string[]): Promise<number> {
  const { values, positionals } = readFlags(argv, FLAGS);
  if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`, positionals[0]!);
  const namespace = stringFlag(values, "namespace") ?? null;
  if (namespace === null && !values.clusterwide) {
    throw new UsageError(`kobun ${command} needs -n NAMESPACE or --clusterwide`, "--namespace");
  }
  if (namespace !== null && values.clusterwide) {
    throw new UsageError(`kobun ${command}: give -n NAMESPACE or --clusterwide, not both`, "--clusterwide");
  }
  const group = stringFlag(values, "group") ?? "kobun.dev";
  if (group !== "kobun.dev" && group !== "kopf.dev") {
    const expected = '"kobun.dev" or "kopf.dev"';
    throw new ConfigError([configIssue({ flag: "--group", expected }, `expected ${expected}, got "${group}"`)]);
  }
  const kubeconfig = stringFlag(values, "kubeconfig");
  const context = stringFlag(values, "context");
  const client = await KubeClient.connect({
    ...(kubeconfig ? { kubeconfig } : { useDefaults: true }), ...(context ? { context } : {}),
  });
  const common = {
    client,
    name: stringFlag(values, "peering") ?? "default",
    namespace,
    group,
  };
  if (command === "freeze") {
    const lifetime = numberFlag(values, "lifetime", NaN);
    if (!Number.isFinite(lifetime) || lifetime <= 0) {
      throw new UsageError("kobun freeze needs --lifetime SECONDS (> 0)", "--lifetime");
    }
    const message = stringFlag(values, "message");
    if (values.dev && values.priority !== undefined) {
      const why = `--dev freezes with priority ${DEV_PRIORITY}: give --dev or --priority, not both`;
      throw new UsageError(why, "--priority");
    }
    const priority = values.dev ? DEV_PRIORITY : numberFlag(values, "priority", 100);
    const options = { ...common, lifetime, priority, ...(message ? { message } : {}) };
    await notServedSaid(common, () => freezeManually(options));
    console.log(`frozen: peering ${common.name} for ${lifetime}s`);
  } else {
    await notServedSaid(common, () => resumeManually(common));
    console.log(`resumed: peering ${common.name}`);
  }
  return 0;
}

/** The peering CRDs not installed is a step not done yet: said so, with where to get them (exit 5), not a bare 404. */
async function notServedSaid(
  target: { group: string; namespace: string | null }, write: () => Promise<unknown>,
): Promise<void> {
  try {
    await write();
  } catch (error) {
    if (!isResourceMissing(error)) throw error;
    const { plural } = peeringResource(target.group, target.namespace !== null);
    const why = `${plural}.${target.group} is not served by the API server: install the peering CRDs first ` +
      "(kobun manifests prints them, unless --standalone)";
    throw new FatalError("fatal", why, { cause: error });
  }
}
