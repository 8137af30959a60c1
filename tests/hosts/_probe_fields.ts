/** The fields of `tyhooks probe`'s answer, in SPEC's order ("Host facts and host picking"). */
export const PROBE_FIELDS: readonly string[] = [
  "hostname",
  "os",
  "arch",
  "cpus",
  "load_avg",
  "mem_total_bytes",
  "mem_available_bytes",
  "disk_free_bytes",
  "uptime_s",
  "version",
];
