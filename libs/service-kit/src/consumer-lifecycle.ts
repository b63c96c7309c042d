import { PinoLogger } from 'nestjs-pino';

/**
 * What a consumer that died for good does: no live-looking pod without a consumer; shut down and let the
 * orchestrator restart it.
 */
export const shutdownOnFatal =
  (logger: PinoLogger, what: string) =>
  (reason: string): void => {
    logger.fatal({ reason }, `${what} stopped for good; shutting down`);
    process.exitCode = 1;
    process.kill(process.pid, 'SIGTERM');
  };
