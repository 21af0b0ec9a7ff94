import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ProvisioningError,
  type AssistantRequest,
  type NumberRequest,
  type ProvisioningProvider,
} from './provider';

/** Wall-clock timings at SIMULATOR_SPEED=1 (about a second in all); divided by the speed. */
const TIMINGS = { buyNumberMs: 600, createAssistantMs: 400 };

/** Area codes picked from when none is asked for. */
const ANY_AREA_CODES = ['212', '305', '312', '415', '503', '512', '617', '702', '720', '808'];

/** The simulator's area code without numbers (docs/API.md, Receptionists). */
export const UNAVAILABLE_AREA_CODE = '999';

export type ProvisioningOperation = 'buyNumber' | 'createAssistant';

/** A test seam: return an error to make that call fail (after its usual delay). */
export type FaultInjector = (
  operation: ProvisioningOperation,
  key: string,
) => ProvisioningError | undefined;

const digest = (key: string): Buffer => createHash('sha256').update(key).digest();

/**
 * The number the simulator sells for `key`: `+1`, the area code (or one picked by the key),
 * and 7 digits derived from the key. Derived, not drawn, so the same key returns the same
 * number in any process, as a provider's own account would after a worker crash.
 */
export function simulatedNumber(key: string, areaCode: string | null): string {
  const h = digest(key);
  const area = areaCode ?? (ANY_AREA_CODES[h.readUInt8(0) % ANY_AREA_CODES.length] as string);
  const exchange = 200 + (h.readUInt16BE(1) % 800);
  const line = String(h.readUInt16BE(3) % 10_000).padStart(4, '0');
  return `+1${area}${exchange}${line}`;
}

/**
 * The built-in provisioning provider: about a second per receptionist at SIMULATOR_SPEED=1.
 * Area code 999 has no numbers (a permanent `number_unavailable`); any other works. Both
 * calls are idempotent by key. It counts what it is asked to do, so tests can check that a
 * receptionist was sold exactly one number, and `fault` lets them inject failures.
 */
export class SimulatorProvisioningProvider implements ProvisioningProvider {
  readonly name = 'simulator';
  private readonly sold = new Map<string, string>();
  private readonly buyCalls = new Map<string, number>();

  constructor(
    private readonly speed: number,
    private readonly fault?: FaultInjector,
  ) {}

  async buyNumber(req: NumberRequest): Promise<string> {
    this.buyCalls.set(req.key, (this.buyCalls.get(req.key) ?? 0) + 1);
    await this.wait(TIMINGS.buyNumberMs);
    if (req.areaCode === UNAVAILABLE_AREA_CODE) {
      throw new ProvisioningError(
        'number_unavailable',
        `No phone numbers are available in area code ${req.areaCode}`,
        true,
      );
    }
    const injected = this.fault?.('buyNumber', req.key);
    if (injected) throw injected;
    const number = this.sold.get(req.key) ?? simulatedNumber(req.key, req.areaCode);
    this.sold.set(req.key, number);
    return number;
  }

  async createAssistant(req: AssistantRequest): Promise<string> {
    await this.wait(TIMINGS.createAssistantMs);
    const injected = this.fault?.('createAssistant', req.key);
    if (injected) throw injected;
    return `asst_${digest(`assistant:${req.key}`).toString('hex').slice(0, 24)}`;
  }

  /** How many times a number was asked for with `key` (each one a purchase if not idempotent). */
  buyCallsFor(key: string): number {
    return this.buyCalls.get(key) ?? 0;
  }

  /** Distinct numbers sold for `key` by this instance (0 or 1). */
  numbersSoldFor(key: string): number {
    return this.sold.has(key) ? 1 : 0;
  }

  async close(): Promise<void> {}

  private wait(ms: number): Promise<void> {
    return sleep(ms / this.speed);
  }
}
