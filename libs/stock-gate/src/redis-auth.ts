import { RedisOptions } from 'ioredis';
import { z } from 'zod';

/** The gate's Redis credentials (`requirepass`, or an ACL user): a block the configs of gate users extend. */
export const REDIS_AUTH_ENV = {
  /** An ACL user; without it the password is the default user's (`requirepass`). */
  REDIS_USERNAME: z.string().min(1).optional(),
  REDIS_PASSWORD: z.string().min(1).optional(),
};

/** The Redis credential variables once parsed. */
export type RedisAuthEnv = { REDIS_USERNAME?: string; REDIS_PASSWORD?: string };

/** A username without a password cannot log in: a config error at boot (the message names no value). */
export function checkRedisAuth(env: RedisAuthEnv, ctx: z.RefinementCtx): void {
  if (env.REDIS_USERNAME && !env.REDIS_PASSWORD)
    ctx.addIssue({
      code: 'custom',
      path: ['REDIS_PASSWORD'],
      message: 'required when REDIS_USERNAME is set',
    });
}

/** The ioredis options of parsed credentials; they win over credentials written in REDIS_URL. */
export function redisAuthOf(env: RedisAuthEnv): Pick<RedisOptions, 'username' | 'password'> {
  return {
    ...(env.REDIS_USERNAME ? { username: env.REDIS_USERNAME } : {}),
    ...(env.REDIS_PASSWORD ? { password: env.REDIS_PASSWORD } : {}),
  };
}
