/**
 * The JSON Schema of `plugin.yaml`, generated from the zod schema (never written by hand).
 *
 * @module
 */

/**
 * Generates the JSON Schema (draft 2020-12) of `plugin.yaml`, for editors and CI linters.
 *
 * @returns The schema as a JSON-ready object.
 * @example
 * ```ts
 * import { manifestJsonSchema } from "./json_schema.ts";
 * const schema = await manifestJsonSchema();
 * console.assert("name" in (schema.properties as object));
 * ```
 */
export async function manifestJsonSchema(): Promise<Record<string, unknown>> {
  const [{ z }, { ManifestSchema }] = await Promise.all([
    import("zod"),
    import("./manifest_schema.ts"),
  ]);
  // "input": what a person writes, optional fields and all.
  return z.toJSONSchema(ManifestSchema, { io: "input" }) as Record<string, unknown>;
}
