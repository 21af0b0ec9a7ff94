import Ajv, { type ValidateFunction } from 'ajv';
import { withDotEnv } from './dotenv';
import { ConfigError } from './errors';
import { envSchema } from './schema';
import {
  COMMAND_SETTINGS,
  SETTINGS,
  type Command,
  type Config,
  type ConfigFor,
  type EnvName,
  type EnvValues,
} from './settings';

export type {
  ApiConfig,
  Command,
  Config,
  ConfigFor,
  OperatorConfig,
  WorkerConfig,
} from './settings';
export { COMMAND_SETTINGS } from './settings';
export { readDotEnv, withDotEnv } from './dotenv';

export { ConfigError } from './errors';
export type { RedisTarget, SentinelAddress } from './redis';

const ajv = new Ajv({ coerceTypes: true, useDefaults: true, allErrors: false, strict: false });
const properties: Record<
  string,
  { default?: unknown; description?: string; 'x-optional'?: boolean }
> = envSchema.properties;
const validators = new Map<string, ValidateFunction>();

/**
 * The validator of some settings: their variables only, each required unless the schema
 * gives it a default. Compiled once per set of settings.
 */
function validatorFor(settings: ReadonlyArray<keyof Config>): ValidateFunction {
  const cacheKey = settings.join(',');
  let validate = validators.get(cacheKey);
  if (!validate) {
    const names = settings.flatMap((s) => SETTINGS[s].variables);
    validate = ajv.compile({
      type: 'object',
      required: names.filter(
        (n) => properties[n]?.default === undefined && !properties[n]?.['x-optional'],
      ),
      properties: Object.fromEntries(names.map((n) => [n, properties[n]])),
    });
    validators.set(cacheKey, validate);
  }
  return validate;
}

/**
 * Parses the given settings from the environment. Only their variables are read; empty
 * strings count as unset so `FOO= npm start` falls back to the default.
 */
function parse<K extends keyof Config>(
  settings: ReadonlyArray<K>,
  env: NodeJS.ProcessEnv,
): Pick<Config, K> {
  const validate = validatorFor(settings);
  const input: Record<string, string> = {};
  for (const name of settings.flatMap((s) => SETTINGS[s].variables)) {
    const value = env[name];
    if (value !== undefined && value !== '') input[name] = value;
  }
  // Which variables the operator set, before the validator fills in defaults.
  const set = new Set(Object.keys(input));
  const wasSet = (name: EnvName): boolean => set.has(name);
  if (!validate(input)) {
    const err = validate.errors?.[0];
    const name = (
      err?.keyword === 'required'
        ? (err.params as { missingProperty: string }).missingProperty
        : (err?.instancePath.slice(1) ?? 'configuration')
    ) as EnvName;
    const what = input[name] === undefined ? 'is missing' : 'is invalid';
    const expected = properties[name]?.description ?? 'a valid value';
    throw new ConfigError(name, `${name} ${what}: expected ${expected}`);
  }
  const values = input as EnvValues;
  const config = Object.fromEntries(settings.map((s) => [s, SETTINGS[s].build(values, wasSet)]));
  return deepFreeze(config as Pick<Config, K>);
}

/** Every setting (tests, tools): each variable without a default must be present. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return parse(Object.keys(SETTINGS) as Array<keyof Config>, env);
}

/** The settings one command uses, and only those (COMMAND_SETTINGS). */
export function loadConfigFor<C extends Command>(
  command: C,
  env: NodeJS.ProcessEnv = process.env,
): ConfigFor<C> {
  return parse(COMMAND_SETTINGS[command], env) as ConfigFor<C>;
}

/**
 * Boot helper of every command: the environment over `.env` (when the working directory
 * has one; the environment wins), parsed for `command`, or the one-line reason and exit 1.
 */
export function loadConfigOrExit<C extends Command>(
  command: C,
  env: NodeJS.ProcessEnv = process.env,
): ConfigFor<C> {
  try {
    return loadConfigFor(command, withDotEnv(env));
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`switchboard: configuration error: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Buffer.isBuffer(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
