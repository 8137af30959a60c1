/** Test helpers: real git repositories in temp dirs, for `plugins add|update|remove`. */

import assert from "node:assert/strict";
import { cli, type CliResult, makeTree, writeTree } from "../_cli.ts";

/** git with a fixed identity and no user or system config. */
export const GIT_ENV: Record<string, string> = {
  GIT_AUTHOR_NAME: "Test",
  GIT_AUTHOR_EMAIL: "test@example.com",
  GIT_COMMITTER_NAME: "Test",
  GIT_COMMITTER_EMAIL: "test@example.com",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
};

/** Runs git in `cwd`, failing the test on a non-zero exit; returns its stdout. */
export async function git(cwd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", { args, cwd, env: GIT_ENV }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout);
}

/** A new repository (branch main) holding `files`, committed; returns its path. */
export async function gitRepo(files: Record<string, string>, name = "repo"): Promise<string> {
  const dir = `${await makeTree({})}/${name}`;
  await Deno.mkdir(dir);
  await writeTree(dir, files);
  await git(dir, "init", "-q", "-b", "main");
  await git(dir, "add", "-A");
  await git(dir, "commit", "-q", "-m", "first");
  return dir;
}

/** Writes `files` into `repo` and commits them (a new upstream commit). */
export async function commit(repo: string, files: Record<string, string>, message = "next") {
  await writeTree(repo, files);
  await git(repo, "add", "-A");
  await git(repo, "commit", "-q", "-m", message);
}

/** A plugin's files: a manifest with one task.done hook and its script. */
export function pluginFiles(name: string, prefix = ""): Record<string, string> {
  return {
    [`${prefix}plugin.yaml`]: `name: ${name}\nhooks:\n  task.done: on-done.sh\n`,
    [`${prefix}on-done.sh`]: `#!/bin/sh\necho ${name} done\n`,
  };
}

/** `tyhooks plugins add <args> --plugins-dir <root>`. */
export function pluginsAdd(root: string, ...args: string[]): Promise<CliResult> {
  return cli(["plugins", "add", ...args, "--plugins-dir", root]);
}

/** The names in `dir`, sorted. */
export function names(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name).sort();
}
