import { createHash, timingSafeEqual } from 'node:crypto';
import { CanActivate, ExecutionContext, Injectable, createParamDecorator } from '@nestjs/common';
import { Request } from 'express';
import { z } from 'zod';
import { ApiError } from './api-error';

/** A merchant of the platform, as the services know it. */
export interface Tenant {
  id: string;
  /** sha256 hex of the API key: the key itself is never stored. */
  apiKeySha256: string;
  /** Secret the PSP signs this tenant's webhooks with. */
  webhookSecret: string;
  /** The tenant's account at the PSP (marketplaces may have one per merchant). */
  pspAccount: string;
}

const TenantSchema = z.object({
  id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/),
  apiKeySha256: z.string().regex(/^[0-9a-f]{64}$/),
  webhookSecret: z.string().min(16),
  pspAccount: z.string().min(1),
});

/** sha256 hex of an API key. */
export const hashApiKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

/** The dev seed of PRODUCT.md section 3: only when DEV_SEED=true; production reads TENANTS from a secret. */
export const DEV_TENANTS: Tenant[] = [
  {
    id: 'acme',
    apiKeySha256: hashApiKey('acme-dev-key'),
    webhookSecret: 'whsec_acme_dev_0123456789',
    pspAccount: 'acct_acme',
  },
  {
    id: 'globex',
    apiKeySha256: hashApiKey('globex-dev-key'),
    webhookSecret: 'whsec_globex_dev_0123456789',
    pspAccount: 'acct_globex',
  },
];

/** The tenants known to a service: from TENANTS (JSON array) and, in dev, the seed. */
export class TenantRegistry {
  private readonly byId = new Map<string, Tenant>();

  constructor(tenants: Tenant[]) {
    for (const t of tenants) this.byId.set(t.id, TenantSchema.parse(t));
  }

  /** Reads TENANTS (a JSON array of Tenant) and adds the dev seed when DEV_SEED=true. */
  static fromEnv(env: NodeJS.ProcessEnv = process.env): TenantRegistry {
    const configured = env.TENANTS ? (JSON.parse(env.TENANTS) as Tenant[]) : [];
    return new TenantRegistry([...(env.DEV_SEED === 'true' ? DEV_TENANTS : []), ...configured]);
  }

  get(id: string): Tenant | undefined {
    return this.byId.get(id);
  }

  all(): Tenant[] {
    return [...this.byId.values()];
  }

  /** The tenant whose API key this is, compared in constant time. */
  byApiKey(key: string): Tenant | undefined {
    const hash = Buffer.from(hashApiKey(key), 'hex');
    for (const t of this.byId.values()) {
      if (timingSafeEqual(hash, Buffer.from(t.apiKeySha256, 'hex'))) return t;
    }
    return undefined;
  }
}

/** A request after TenantGuard: the tenant comes from the API key, never from a header the caller picks. */
export interface TenantRequest extends Request {
  tenant: Tenant;
}

/** Requires `Authorization: Bearer <tenant API key>`; 401 UNAUTHENTICATED otherwise. */
@Injectable()
export class TenantGuard implements CanActivate {
  constructor(private readonly tenants: TenantRegistry) {}

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<TenantRequest>();
    const match = /^Bearer ([\x21-\x7e]{1,256})$/.exec(req.headers.authorization ?? '');
    const tenant = match ? this.tenants.byApiKey(match[1]) : undefined;
    if (!tenant)
      throw new ApiError(
        401,
        'UNAUTHENTICATED',
        'a valid tenant API key is required (Authorization: Bearer <key>)',
      );
    req.tenant = tenant;
    return true;
  }
}

/** The authenticated tenant of the request (use with TenantGuard). */
export const CurrentTenant = createParamDecorator((_: unknown, ctx: ExecutionContext): Tenant => {
  return ctx.switchToHttp().getRequest<TenantRequest>().tenant;
});
