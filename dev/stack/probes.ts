import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

/**
 * Readiness probes. `ca` verifies the server properly where we know its CA; components
 * that make their own self-signed serving certificate (controller-manager, scheduler)
 * are probed without verification — only to learn that they answer.
 */
export function httpStatus(url: string, options: { ca?: string; insecure?: boolean } = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req =
      u.protocol === 'https:'
        ? httpsRequest(u, { ca: options.ca, rejectUnauthorized: !options.insecure, timeout: 2000 })
        : httpRequest(u, { timeout: 2000 });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error(`timeout probing ${url}`)));
    req.on('error', reject);
    req.end();
  });
}

export async function answers200(url: string, options: { ca?: string; insecure?: boolean } = {}): Promise<boolean> {
  return (await httpStatus(url, options)) === 200;
}
