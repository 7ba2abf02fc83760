// `kobun run` flags: both `--flag value` and `--flag=value`, repeated -n, and a usage
// error naming any unknown flag with the closest known one.

import { describe, expect, test } from "bun:test";
import { ConfigError, parseRunFlags, resolveSettings, runFlagsHelp, UsageError } from "../../src/config/index.ts";

function usageError(argv: string[]): UsageError {
  try {
    parseRunFlags(argv);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return error as UsageError;
  }
  throw new Error("expected a UsageError");
}

describe("parseRunFlags", () => {
  test("every flag, in both spellings", () => {
    const { flags, positionals } = parseRunFlags([
      "--config", "my.yaml", "--kubeconfig=/k", "--context", "kind", "-n", "team-*", "--namespace=!team-old",
      "--standalone", "--priority", "-5", "--peering=blue", "--liveness", "http://0.0.0.0:8080/healthz",
      "--log-format=json", "-v", "handlers/main.ts",
    ]);
    expect(flags).toEqual({
      config: "my.yaml", kubeconfig: "/k", context: "kind", namespaces: ["team-*", "!team-old"], standalone: true,
      priority: -5, peering: "blue", liveness: "http://0.0.0.0:8080/healthz", logFormat: "json", verbose: true,
    });
    expect(positionals).toEqual(["handlers/main.ts"]);
  });

  test("repeated -n accumulates, and commas split", () => {
    expect(parseRunFlags(["-n", "a", "-n", "b,c", "--namespace", "d"]).flags.namespaces).toEqual(["a", "b", "c", "d"]);
  });

  test("-A, -q and -- ending the flags", () => {
    expect(parseRunFlags(["-A", "-q", "--", "--not-a-flag"])).toEqual({ flags: { allNamespaces: true, quiet: true }, positionals: ["--not-a-flag"] });
  });

  test("an unknown long flag names it and suggests the closest known one", () => {
    const error = usageError(["--namspace", "x"]);
    expect(error.message).toBe("unknown flag --namspace; did you mean --namespace?");
    expect(error.flag).toBe("--namspace");
    expect(usageError(["--all-namespace"]).message).toBe("unknown flag --all-namespace; did you mean --all-namespaces?");
  });

  test("an unknown flag with nothing close lists the known ones", () => {
    expect(usageError(["--xyzzy-plugh"]).message).toStartWith("unknown flag --xyzzy-plugh; known flags: --config, --kubeconfig,");
  });

  test("a missing value, a value given to a switch, -v with -q", () => {
    expect(usageError(["--context"]).message).toBe("--context needs a value (NAME)");
    expect(usageError(["-n", "--standalone"]).message).toBe("-n needs a value (NS)");
    expect(usageError(["--standalone=yes"]).message).toBe('--standalone takes no value, got "yes"');
    expect(usageError(["-v", "-q"]).message).toBe("--verbose and --quiet cannot be used together");
  });

  test("a value that is not a number is a bad flag value (a ConfigError: exit 3, as the README's table says), not bad usage", () => {
    for (const [argv, message] of [
      [["--priority", "high"], '--priority expects an integer, got "high"'],
      [["--shards=abc"], '--shards expects a positive integer, got "abc"'],
    ] as const) {
      const error = (() => { try { parseRunFlags([...argv]); } catch (e) { return e; } })();
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).message).toBe(message);
      expect((error as ConfigError).issues[0]?.flag).toBe(argv[0].split("=")[0]);
    }
  });

  test("--dev is Kopf's: peering on at priority 666, over a config file's and a caller's standalone", () => {
    const { flags } = parseRunFlags(["--dev", "--peering", "team"]);
    expect(flags).toEqual({ dev: true, peering: "team" });
    const settings = resolveSettings({ flags: { standalone: true, ...flags }, fileData: { peering: { priority: 5 } } });
    expect(settings.peering).toMatchObject({ standalone: false, priority: 666, name: "team" });
    expect(resolveSettings({ flags: parseRunFlags([]).flags }).peering).toMatchObject({ standalone: false, priority: 0 });
    expect(usageError(["--dev", "--priority", "7"]).message)
      .toBe("--dev sets the peering priority to 666: give --dev or --priority, not both");
    expect(usageError(["--standalone", "--dev"]).message)
      .toBe("--dev outranks the other operators through peering; --standalone does not peer");
    expect(usageError(["--dev=yes"]).message).toBe('--dev takes no value, got "yes"');
  });

  test("help lists every flag", () => {
    expect(runFlagsHelp()).toContain("--dev                      A developer's operator: peering priority 666");
    expect(runFlagsHelp()).toContain("-n, --namespace NS");
    expect(runFlagsHelp()).toContain("-A, --all-namespaces");
  });

  test("kobun dev's help leaves out the flags dev refuses", () => {
    const dev = runFlagsHelp("kobun dev [flags]", ["kubeconfig", "context"]);
    expect(dev).toStartWith("Usage: kobun dev [flags]\n");
    expect(dev).not.toContain("--kubeconfig");
    expect(dev).not.toContain("--context");
    expect(dev).toContain("--config FILE");
  });
});
