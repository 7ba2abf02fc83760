// RSS of a running process's executable per ELF section (.text, .rodata, .bun: the compiled
// program's embedded bundle and bytecode, ...): the section headers give each section's virtual
// addresses, /proc/<pid>/pagemap which of their pages are resident. A compiled Bun program maps
// its whole runtime; which parts of it a program touched is what this tells apart.

import { closeSync, openSync, readFileSync, readSync, readlinkSync } from "node:fs";

const PAGE = 4096;

interface Section { name: string; address: number; size: number }

/** The allocated sections of a 64-bit little-endian ELF file (a non-PIE executable: absolute addresses). */
export function elfSections(path: string): Section[] {
  const file = readFileSync(path);
  if (file.readUInt32BE(0) !== 0x7f454c46 || file[4] !== 2 || file[5] !== 1) throw new Error(`${path}: not a 64-bit little-endian ELF file`);
  if (file.readUInt16LE(16) !== 2) throw new Error(`${path}: not a non-PIE executable (ET_EXEC); section addresses would need the load base`);
  const offset = Number(file.readBigUInt64LE(0x28));
  const entrySize = file.readUInt16LE(0x3a);
  const count = file.readUInt16LE(0x3c);
  const header = (i: number) => offset + i * entrySize;
  const names = header(file.readUInt16LE(0x3e));
  const namesOffset = Number(file.readBigUInt64LE(names + 0x18));
  const sections: Section[] = [];
  for (let i = 1; i < count; i++) {
    const at = header(i);
    const allocated = (file.readBigUInt64LE(at + 8) & 2n) !== 0n; // SHF_ALLOC: mapped at run time
    const address = Number(file.readBigUInt64LE(at + 0x10));
    const size = Number(file.readBigUInt64LE(at + 0x20));
    if (!allocated || size === 0) continue;
    const nameAt = namesOffset + file.readUInt32LE(at);
    sections.push({ name: file.toString("latin1", nameAt, file.indexOf(0, nameAt)), address, size });
  }
  return sections;
}

/** KiB resident of each allocated section of the process's executable (present pages; a page shared by two sections counts for both). */
export function sectionRssKiB(pid: number): Record<string, number> {
  const sections = elfSections(readlinkSync(`/proc/${pid}/exe`));
  const pagemap = openSync(`/proc/${pid}/pagemap`, "r");
  try {
    const out: Record<string, number> = {};
    for (const s of sections) {
      const first = Math.floor(s.address / PAGE);
      const pages = Math.ceil((s.address + s.size) / PAGE) - first;
      const entries = Buffer.alloc(pages * 8);
      readSync(pagemap, entries, 0, entries.length, first * 8);
      let present = 0;
      for (let i = 0; i < pages; i++) if (entries.readBigUInt64LE(i * 8) >> 63n) present++;
      out[s.name] = (out[s.name] ?? 0) + (present * PAGE) / 1024;
    }
    return out;
  } finally {
    closeSync(pagemap);
  }
}
