import { z } from 'zod';

/** Settings every service reads from its environment. */
export const BaseConfigSchema = z.object({
  SERVICE_NAME: z.string().min(1),
  PORT: z.coerce.number().int().min(1).max(65535),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  KAFKA_BROKERS: z.string().min(1),
  DATABASE_URL: z.string().url().optional(),
  /** Largest accepted HTTP body. */
  BODY_LIMIT: z.string().default('64kb'),
  /** How long SIGTERM may take: consumers drain, HTTP finishes in-flight requests. */
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(1000).default(20_000),
});
export type BaseConfig = z.infer<typeof BaseConfigSchema>;

/** A configuration error, raised at boot so a bad deployment fails fast with the variable's name. */
export class ConfigError extends Error {}

/** Parses the environment once with the given schema; throws ConfigError naming every bad variable. */
export function parseConfig<S extends z.ZodType>(
  schema: S,
  env: NodeJS.ProcessEnv = process.env,
): z.infer<S> {
  const result = schema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`invalid configuration: ${problems}`);
  }
  return result.data;
}
