import { execFileSync } from 'node:child_process';
import os from 'node:os';

/**
 * BENCH_SERVER_CPUS=1 BENCH_CLIENT_CPUS=0: the server process on its own core, and this process
 * (the load generator) with PostgreSQL on the other. On two cores shared by all three, a server's
 * throughput swung by ±15 % between identical rounds (docs/benchmarks.md, "Audit trail and
 * tracing"); alone on a core, its CPU per request is what limits it, and that moves far less.
 * Needs taskset (util-linux) and, for PostgreSQL, the right to set another process's affinity.
 */
export const serverCpus = () => process.env['BENCH_SERVER_CPUS'] || undefined;

/** The command line that starts `args` on the server's cores, or as is when none are set. */
export function onServerCpus(command: string, args: string[]): [string, string[]] {
  const cpus = serverCpus();
  // taskset execs the command, so the child's pid is the server's.
  return cpus ? ['taskset', ['-c', cpus, command, ...args]] : [command, args];
}

function setAffinity(pid: number, cpus: string): void {
  execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
}

function postgresPids(): number[] {
  try {
    return execFileSync('pgrep', ['-x', 'postgres'], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return []; // none on this machine
  }
}

/**
 * Pins this process and PostgreSQL's (new backends inherit the postmaster's affinity) to
 * BENCH_CLIENT_CPUS; the returned function gives PostgreSQL every core back.
 */
export function pinClientSide(): () => void {
  const cpus = process.env['BENCH_CLIENT_CPUS'];
  if (!cpus) return () => {};
  setAffinity(process.pid, cpus);
  const pids = postgresPids();
  for (const pid of pids) setAffinity(pid, cpus);
  // os.cpus() counts the machine's cores; hardwareConcurrency would count this pinned process's one.
  const all = `0-${Math.max(0, os.cpus().length - 1)}`;
  return () => {
    for (const pid of postgresPids()) {
      try {
        setAffinity(pid, all);
      } catch {} // a backend that has exited since
    }
  };
}
