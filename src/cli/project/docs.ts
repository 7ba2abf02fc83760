// `kobun docs`: where the guides are. The npm package carries docs/ (package.json "files"), so the
// README's links resolve inside node_modules/kobun too; this prints that directory and, from
// docs/README.md's index, each guide's file with what it covers.

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ExitCode } from "../../runtime/exits.ts";
import { KOBUN_ROOT } from "./build.ts";

export const DOCS_HELP = `Usage: kobun docs
Prints where kobun's guides are (the docs/ directory of the installed kobun package, the same
version as the command) and lists them.`;

/** One guide of docs/README.md's list: `- [title](file.md): what it covers`. */
const GUIDE = /^- \[([^\]]+)\]\(([^)]+\.md)\)(?::\s*(.*))?$/;

export function docsCommand(root = KOBUN_ROOT): number {
  const docs = join(root, "docs");
  const index = join(docs, "README.md");
  if (!existsSync(index)) {
    console.error(`kobun docs: ${docs} is missing: this kobun package is incomplete; reinstall it`);
    return ExitCode.config;
  }
  const guides = readFileSync(index, "utf8").split("\n").flatMap((line) => {
    const match = GUIDE.exec(line.trim());
    return match ? [{ title: match[1]!, file: join(docs, match[2]!), about: match[3] ?? "" }] : [];
  });
  console.log(`kobun's guides (this version's) are in ${docs}; the overview is ${join(root, "README.md")}.\n`);
  for (const guide of guides) {
    console.log(`  ${guide.file}\n      ${guide.title}${guide.about ? `: ${guide.about}` : ""}`);
  }
  return ExitCode.ok;
}
