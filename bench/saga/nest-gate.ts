import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import {
  Body,
  CanActivate,
  Controller,
  ExecutionContext,
  HttpCode,
  HttpException,
  Injectable,
  Module,
  PipeTransform,
  Post,
  UseGuards,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { z } from 'zod';
import { StockGate } from '@checkout/stock-gate';

/**
 * The framework floor of issue 16's HTTP-path ratio: the bare gate's route (bare-gate.ts) inside NestJS, on the
 * express or the Fastify adapter, with what any Nest route of ours has at least: a guard reading a header, a zod
 * pipe, an exception for the refusal. No logs, no traces, no tenancy, no idempotency. What Nest itself costs per
 * request, on each adapter. argv: <port> <redis url> <express|fastify>.
 */
const TakeBody = z.object({ tenantId: z.string().min(1), sku: z.string().min(1) }).strict();

class ZodPipe implements PipeTransform {
  transform(value: unknown) {
    const r = TakeBody.safeParse(value);
    if (!r.success) throw new HttpException({ error: 'VALIDATION_FAILED' }, 400);
    return r.data;
  }
}

@Injectable()
class KeyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    return req.headers.authorization === 'Bearer floor';
  }
}

let gate: StockGate;

@Controller()
class TakeController {
  @Post('take')
  @HttpCode(202)
  @UseGuards(KeyGuard)
  async take(@Body(new ZodPipe()) body: z.infer<typeof TakeBody>) {
    const take = await gate.take(body.tenantId, randomUUID(), [{ sku: body.sku, quantity: 1 }]);
    if (take.outcome === 'Insufficient')
      throw new HttpException({ error: 'OUT_OF_STOCK', sku: take.sku, remaining: take.remaining }, 409);
    return { outcome: take.outcome };
  }
}

@Module({ controllers: [TakeController], providers: [KeyGuard] })
class FloorModule {}

async function main(): Promise<void> {
  const [port, redisUrl, adapter] = process.argv.slice(2);
  gate = StockGate.connect(redisUrl);
  await gate.ready(5_000);
  const app =
    adapter === 'fastify'
      ? await NestFactory.create(FloorModule, new FastifyAdapter(), { logger: false })
      : await NestFactory.create(FloorModule, { logger: false });
  await app.listen(Number(port), '127.0.0.1');
  process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
