/**
 * An error that retrying cannot fix (unknown tenant, an event that breaks a business rule): the runtime parks
 * the message on the dead-letter topic at once instead of retrying it.
 */
export class NonRetryableError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'NonRetryableError';
  }
}
