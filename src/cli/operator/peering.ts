// `kobun freeze` and `kobun resume`: a manual peering record for maintenance windows,
// like `kopf freeze` / `kopf resume`: every operator of lower priority freezes while it lasts.

import {
  ConfigError, configIssue, DEV_PRIORITY, SETTINGS_SCHEMA, UsageError, type ConfigIssue,
} from "../../config/index.ts";
import { KubeClient } from "../../kube/index.ts";
import { freezeManually, isResourceMissing, peeringResource, resumeManually } from "../../peering/index.ts";
import { FatalError } from "../../runtime/exits.ts";
import { readFlags, stringFlag } from "../args.ts";

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
-n may be repeated: each namespace's peering object gets the record (as Kopf's -n).
--dev is --priority ${DEV_PRIORITY}, as kobun run --dev's.`;

/** What a freeze or resume writes, read from the command line before anything connects. */
interface PeeringOrder {
  namespaces: (string | null)[];
  name: string;
  group: string;
  lifetime: number;
  priority: number;
  message?: string;
  kubeconfig?: string;
  context?: string;
}

export async function peeringCommand(command: "freeze" | "resume", argv: string[]): Promise<number> {
  const order = readOrder(command, argv);
  const client = await KubeClient.connect({
    ...(order.kubeconfig ? { kubeconfig: order.kubeconfig } : { useDefaults: true }),
    ...(order.context ? { context: order.context } : {}),
  });
  for (const namespace of order.namespaces) {
    const target = { client, name: order.name, namespace, group: order.group };
    // As Kopf's `-n` (multiple): each namespace's peering object gets the record; one names itself only then.
    const where = order.namespaces.length > 1 ? ` in ${namespace}` : "";
    if (command === "freeze") {
      const { lifetime, priority, message } = order;
      const record = { lifetime, priority, ...(message ? { message } : {}) };
      await notServedSaid(target, () => freezeManually({ ...target, ...record }));
      console.log(`frozen: peering ${order.name} for ${lifetime}s${where}`);
    } else {
      await notServedSaid(target, () => resumeManually(target));
      console.log(`resumed: peering ${order.name}${where}`);
    }
  }
  return 0;
}

/**
 * The command line's usage errors (exit 2), then every bad value at once (exit 3, as `kobun run`'s flags), all
 * before any connection: a mistyped flag is said as such, not hidden behind a missing kubeconfig.
 */
function readOrder(command: "freeze" | "resume", argv: string[]): PeeringOrder {
  const { values, every, positionals } = readFlags(argv, FLAGS);
  if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`, positionals[0]!);
  const namespaces = (every.namespace ?? []) as string[];   // a value flag: never a bare `true`
  if (namespaces.length === 0 && !values.clusterwide) {
    throw new UsageError(`kobun ${command} needs -n NAMESPACE or --clusterwide`, "--namespace");
  }
  if (namespaces.length > 0 && values.clusterwide) {
    throw new UsageError(`kobun ${command}: give -n NAMESPACE or --clusterwide, not both`, "--clusterwide");
  }
  if (command === "freeze" && values.lifetime === undefined) {
    throw new UsageError("kobun freeze needs --lifetime SECONDS (> 0)", "--lifetime");
  }
  if (values.dev && values.priority !== undefined) {
    const why = `--dev freezes with priority ${DEV_PRIORITY}: give --dev or --priority, not both`;
    throw new UsageError(why, "--priority");
  }
  const order = {
    namespaces: namespaces.length > 0 ? [...new Set(namespaces)] : [null], // `-n a -n a`: one record
    name: stringFlag(values, "peering") ?? "default", group: stringFlag(values, "group") ?? "kobun.dev",
    lifetime: Number(stringFlag(values, "lifetime") ?? 0),
    priority: values.dev ? DEV_PRIORITY : Number(stringFlag(values, "priority") ?? 100),
  };
  const issues = badValues(values, namespaces);
  if (issues.length > 0) throw new ConfigError(issues);
  const given = Object.fromEntries(["message", "kubeconfig", "context"]
    .flatMap((flag) => (stringFlag(values, flag) ? [[flag, stringFlag(values, flag)!]] : [])));
  return { ...order, ...given };
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

type Check = { flag: string; value: string | true | undefined; expected: string; ok: (value: string) => boolean };

/** Each flag value as `kobun run` would judge it (the same words), or the peering record would need it. */
function badValues(values: Record<string, string | true>, namespaces: string[]): ConfigIssue[] {
  const peering = SETTINGS_SCHEMA.fields.peering.fields;
  const checks: Check[] = [
    ...namespaces.map((value): Check => ({ flag: "--namespace", value, expected: "a namespace name (a DNS label)",
      ok: (v) => v.length <= 63 && DNS_LABEL.test(v) })),
    { flag: "--peering", value: values.peering, expected: peering.name.expected,
      ok: (v) => peering.name.read(v).ok },
    { flag: "--group", value: values.group, expected: '"kobun.dev" or "kopf.dev"',
      ok: (v) => peering.group.read(v).ok },
    { flag: "--priority", value: values.priority, expected: "an integer", ok: (v) => /^[-+]?\d+$/.test(v) },
    { flag: "--lifetime", value: values.lifetime, expected: "a whole number of seconds, at least 1",
      ok: (v) => /^\+?0*[1-9]\d*$/.test(v) },
  ];
  const said = ({ flag, value, expected }: Check) =>
    configIssue({ flag, expected }, `expected ${expected}, got ${JSON.stringify(value)}`);
  return checks.filter(({ value, ok }) => typeof value === "string" && !ok(value)).map(said);
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
