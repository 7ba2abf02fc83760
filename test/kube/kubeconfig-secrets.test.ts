// A kubeconfig that does not parse is reported by its path, length and the kind of problem,
// never by the parser's own message: that quotes the text it choked on, which may be the
// token or the client key (issue 11, defect 7).

import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, KubeconfigError } from "../../src/kube/index.ts";

const TOKEN = "s3cr3t-t0ken-abcdef0123456789";
const dir = mkdtempSync(join(tmpdir(), "kobun-kubeconfig-secrets-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function failure(text: string): Promise<KubeconfigError> {
  const path = join(dir, `config-${Math.random().toString(36).slice(2)}`);
  writeFileSync(path, text, { mode: 0o600 });
  const error = await connect({ kubeconfig: path }).then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(KubeconfigError);
  expect((error as Error).message).toContain(path);
  return error as KubeconfigError;
}

test("a JSON kubeconfig with an unquoted token fails without echoing the token", async () => {
  const error = await failure(`{"users":[{"name":"u","user":{"token":${TOKEN}}}]}`);
  expect(error.message).not.toContain(TOKEN);
  expect(error.message).not.toContain("s3cr3t");
  expect(error.message).toMatch(/is not valid JSON: JSON Parse error: Unexpected identifier/);
});

test("broken YAML kubeconfigs around a token and a client key fail without echoing them", async () => {
  const broken = [
    `users:\n- name: u\n  user:\n    token: "${TOKEN}\n  x: [1`,
    `users:\n- name: u\n  user:\n    token: ${TOKEN}: x\n`,
    `users:\n- name: u\n  user:\n    client-key-data: '${TOKEN}\n`,
    `users: {name: ${TOKEN}`,
    `users:\n- name: u\n  user: *${TOKEN}\n`,
  ];
  for (const text of broken) {
    const error = await failure(text);
    expect(error.message).not.toContain("s3cr3t");
    expect(error.message).toContain("is not valid YAML");
    expect(error.message).toContain(`(${text.length} characters)`);
  }
});
