import { z } from 'zod';
import { DomainError } from '@checkout/contracts';

/** Parses a request part with a zod schema, or throws 400 VALIDATION_FAILED listing every problem. */
export function validate<S extends z.ZodType>(schema: S, value: unknown, what = 'body'): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new DomainError('VALIDATION_FAILED', `invalid ${what}`, {
    issues: result.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
  });
}
