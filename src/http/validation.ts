// Request parsing with the route's zod schema: a failure is a 400 naming the field and what to fix.
import type { z } from 'zod';
import { badRequest } from '../core/errors.js';

export function parseWith<S extends z.ZodType>(schema: S, value: unknown, what = 'request body'): z.infer<S> {
  // express.json leaves the body undefined when the request is not application/json
  if (value === undefined) throw badRequest(`Send the ${what} as a JSON object with Content-Type: application/json`);
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue?.path.length ? issue.path.join('.') : what;
  throw badRequest(`${path}: ${issue?.message ?? 'invalid'}`);
}

/** The answer as its documented schema types it: the compiler checks that the service returns what the docs say. */
export const documented = <S extends z.ZodType>(_schema: S, value: z.output<S>): z.output<S> => value;
