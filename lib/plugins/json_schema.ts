/**
 * The JSON Schema of `plugin.yaml`, generated from the zod schema (never written by hand).
 *
 * @module
 */

/**
 * Generates the JSON Schema of `plugin.yaml`, for editors and CI linters. Draft-07: what the
 * YAML language server (VS Code, Neovim, Helix) and most validators read in full.
 *
 * @returns The schema as a JSON-ready object.
 * @example
 * ```ts
 * import { manifestJsonSchema } from "./json_schema.ts";
 * const schema = await manifestJsonSchema();
 * console.assert("name" in (schema.properties as object));
 * console.assert(schema.$schema === "http://json-schema.org/draft-07/schema#");
 * ```
 */
export async function manifestJsonSchema(): Promise<Record<string, unknown>> {
  const [{ z }, { ManifestSchema }] = await Promise.all([
    import("zod"),
    import("./manifest_schema.ts"),
  ]);
  // "input": what a person writes, optional fields and all.
  return z.toJSONSchema(ManifestSchema, { io: "input", target: "draft-7" }) as Record<
    string,
    unknown
  >;
}
