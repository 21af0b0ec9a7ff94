import { readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { Readable } from 'node:stream';
import { sleep } from '../lib/progress';

/** Resident memory (MiB) of the largest process of a process group (the API under tsx). */
export function groupRssMiB(pgid: number): number {
  let best = 0;
  for (const pid of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) !== pgid) continue;
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      best = Math.max(best, kb / 1024);
    } catch {
      // The process exited meanwhile.
    }
  }
  return best;
}

export interface UploadMemory {
  bytes: number;
  status: number;
  seconds: number;
  rssBeforeMiB: number;
  rssPeakMiB: number;
  rssAfterMiB: number;
}

/**
 * POSTs `csv` to /leads/import in 64 KiB chunks (the server reads as fast as it stores) and
 * samples the API's resident memory every 20 ms from before the first byte to the answer.
 */
export async function uploadAndSample(
  apiBase: string,
  key: string,
  pgid: number,
  csv: Buffer,
): Promise<UploadMemory> {
  const rssBeforeMiB = groupRssMiB(pgid);
  let peak = rssBeforeMiB;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, groupRssMiB(pgid));
      await sleep(20);
    }
  })();
  const t0 = performance.now();
  const status = await new Promise<number>((resolve, reject) => {
    const url = new URL(`${apiBase}/api/v1/leads/import`);
    const req = request(
      url,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'text/csv',
          'content-length': String(csv.length),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    const chunks = Array.from({ length: Math.ceil(csv.length / 65536) }, (_, i) =>
      csv.subarray(i * 65536, (i + 1) * 65536),
    );
    Readable.from(chunks).pipe(req);
  });
  const seconds = (performance.now() - t0) / 1000;
  sampling = false;
  await sampler;
  return {
    bytes: csv.length,
    status,
    seconds,
    rssBeforeMiB,
    rssPeakMiB: peak,
    rssAfterMiB: groupRssMiB(pgid),
  };
}
