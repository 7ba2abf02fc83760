// Files the sandbox embeds (bun build --compile keeps them inside the binary): imported with
// `{ type: "file" }`, they are a path to read.
declare module "*.json.gz" {
  const path: string;
  export default path;
}
