// Namespace selection: globs with * and ?, "!glob" exclusions, the cluster-wide decision,
// and the literal list that needs no namespace discovery.

import { describe, expect, test } from "bun:test";
import { fixedNamespaces, isClusterWide, namespaceMatcher, resolveSettings } from "../../src/config/index.ts";

const namespacesOf = (flags: { namespaces?: string[]; allNamespaces?: boolean }, fileData: unknown = {}) =>
  resolveSettings({ fileData, flags });

describe("namespaceMatcher", () => {
  test("globs with * and ?", () => {
    const matches = namespaceMatcher(["team-*", "ns-?"], []);
    expect(["team-a", "team-", "ns-1"].map(matches)).toEqual([true, true, true]);
    expect(["teama", "ns-12", "other", "xteam-a"].map(matches)).toEqual([false, false, false, false]);
  });

  test("negation in include and in exclude", () => {
    const matches = namespaceMatcher(["team-*", "!team-legacy*"], ["team-b"]);
    expect(["team-a", "team-legacy", "team-legacy-2", "team-b"].map(matches)).toEqual([true, false, false, false]);
  });

  test("no includes means every namespace except the excluded", () => {
    const matches = namespaceMatcher(["!kube-*"], []);
    expect(["default", "kube-system"].map(matches)).toEqual([true, false]);
  });

  test("regex characters are literal", () => {
    expect(namespaceMatcher(["a.b"], [])("axb")).toBe(false);
  });
});

describe("namespace settings", () => {
  test("neither -n nor -A: cluster-wide, marked as defaulted for a warning", () => {
    const settings = namespacesOf({});
    expect(settings.namespaces).toEqual({ include: [], exclude: [], allNamespaces: true, defaulted: true });
    expect(isClusterWide(settings)).toBe(true);
    expect(settings.peering.clusterwide).toBe(true);
    expect(fixedNamespaces(settings)).toBeNull();
  });

  test("literal names: a fixed list, minus exclusions, namespaced peering", () => {
    const settings = namespacesOf({ namespaces: ["a", "b", "!b"] });
    expect(isClusterWide(settings)).toBe(false);
    expect(fixedNamespaces(settings)).toEqual(["a"]);
    expect(settings.peering.clusterwide).toBe(false);
  });

  test("globs must be discovered", () => {
    const settings = namespacesOf({ namespaces: ["team-*"] });
    expect(isClusterWide(settings)).toBe(false);
    expect(fixedNamespaces(settings)).toBeNull();
  });

  test("only exclusions, or -A with exclusions: cluster-wide, filtered, not defaulted", () => {
    for (const flags of [{ namespaces: ["!kube-*"] }, { allNamespaces: true, namespaces: ["!kube-*"] }]) {
      expect(namespacesOf(flags).namespaces).toEqual({ include: [], exclude: ["kube-*"], allNamespaces: true, defaulted: false });
    }
  });

  test("flags replace the file's whole namespace selection", () => {
    const fileData = { namespaces: { include: ["x"], exclude: ["y"] } };
    expect(namespacesOf({ allNamespaces: true }, fileData).namespaces).toEqual({ include: [], exclude: [], allNamespaces: true, defaulted: false });
    expect(namespacesOf({}, fileData).namespaces).toEqual({ include: ["x"], exclude: ["y"], allNamespaces: false, defaulted: false });
  });

  test("-A with an included namespace is a conflict", () => {
    expect(() => namespacesOf({ allNamespaces: true, namespaces: ["team-a"] })).toThrow(
      '--all-namespaces: cannot be combined with included namespaces (team-a); to narrow a cluster-wide watch, exclude with "!glob"',
    );
  });

  test("an explicit peering.clusterwide wins over the derived one", () => {
    expect(namespacesOf({ namespaces: ["a"] }, { peering: { clusterwide: true } }).peering.clusterwide).toBe(true);
  });
});
