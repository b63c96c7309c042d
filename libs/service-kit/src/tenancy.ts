import { createHash } from 'node:crypto';
import { CanActivate, ExecutionContext, Injectable, createParamDecorator } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { DomainError } from '@checkout/contracts';
import { ConfigError } from './config';

/** A merchant of the platform, as every service knows it: an id and the hash of its API key, no other secret. */
export interface Tenant {
  id: string;
  /** sha256 hex of the API key: the key itself is never stored. */
  apiKeySha256: string;
}

/**
 * A tenant's account at the PSP, known to the payment service only (and to the PSP): `accountId` is public
 * (rows, metric labels, webhook bodies); `secretKey` goes only into the PSP's Authorization header.
 */
export interface PspCredentials {
  tenantId: string;
  /** The public account id, e.g. `acct_acme` (marketplaces may have one per merchant). */
  accountId: string;
  /** The PSP API secret key of that account: never logged, stored or used as a label. */
  secretKey: string;
  /** Secret the PSP signs this tenant's webhooks with. */
  webhookSecret: string;
}

const TenantId = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/);

// strict(): a TENANTS entry still carrying PSP secrets (the old format) is refused, not silently kept in
// the memory of every service.
const TenantSchema = z.strictObject({
  id: TenantId,
  apiKeySha256: z.string().regex(/^[0-9a-f]{64}$/),
});

const PspCredentialsSchema = z.strictObject({
  tenantId: TenantId,
  accountId: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/),
  secretKey: z.string().regex(/^[\x21-\x7e]{16,256}$/),
  webhookSecret: z.string().regex(/^[\x21-\x7e]{16,256}$/),
});

/** sha256 hex of an API key. */
export const hashApiKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

/** The dev seed (docs/api.md, Conventions): only when DEV_SEED=true; production reads TENANTS from a secret. */
export const DEV_TENANTS: Tenant[] = [
  { id: 'acme', apiKeySha256: hashApiKey('acme-dev-key') },
  { id: 'globex', apiKeySha256: hashApiKey('globex-dev-key') },
];

/** The PSP accounts of the dev seed (DEV_SEED=true, in the services that ask for them). */
export const DEV_PSP_CREDENTIALS: PspCredentials[] = [
  {
    tenantId: 'acme',
    accountId: 'acct_acme',
    secretKey: 'sk_test_acme_dev_0123456789',
    webhookSecret: 'whsec_acme_dev_0123456789',
  },
  {
    tenantId: 'globex',
    accountId: 'acct_globex',
    secretKey: 'sk_test_globex_dev_0123456789',
    webhookSecret: 'whsec_globex_dev_0123456789',
  },
];

/**
 * Parses a JSON array secret (TENANTS, TENANT_PSP_CREDENTIALS) without ever echoing it: neither JSON.parse's
 * message (which quotes the input) nor zod's received values reach the error, only positions and field names.
 */
export function parseSecretList<T>(name: string, raw: string | undefined, schema: z.ZodType<T>): T[] {
  if (raw === undefined || raw.trim() === '') return [];
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new ConfigError(`${name} is not valid JSON (${raw.length} characters; content not shown)`);
  }
  if (!Array.isArray(json)) throw new ConfigError(`${name} must be a JSON array`);
  return json.map((entry, i) => {
    const r = schema.safeParse(entry);
    if (r.success) return r.data;
    const fields = r.error.issues.map((issue) =>
      issue.code === 'unrecognized_keys'
        ? `unexpected field(s) ${issue.keys.join(', ')}`
        : `${issue.path.join('.') || '(entry)'} is missing or malformed`,
    );
    throw new ConfigError(`${name}[${i}]: ${[...new Set(fields)].join('; ')}`);
  });
}

/** Refuses two entries with the same value of `key`: the later one would otherwise silently win. */
function refuseDuplicates<T>(name: string, entries: T[], key: (e: T) => string, what: string): void {
  const seen = new Set<string>();
  entries.forEach((e, i) => {
    const k = key(e);
    if (seen.has(k)) throw new ConfigError(`${name}[${i}]: duplicate ${what}`);
    seen.add(k);
  });
}

/** The tenants known to a service: from TENANTS (JSON array) and, in dev, the seed. */
export class TenantRegistry {
  private readonly byId = new Map<string, Tenant>();
  private readonly byKeyHash = new Map<string, Tenant>();

  constructor(tenants: Tenant[]) {
    const parsed = tenants.map((t) => TenantSchema.parse(t));
    refuseDuplicates('tenants', parsed, (t) => t.id, 'tenant id');
    refuseDuplicates('tenants', parsed, (t) => t.apiKeySha256, 'API key');
    for (const t of parsed) {
      this.byId.set(t.id, t);
      this.byKeyHash.set(t.apiKeySha256, t);
    }
  }

  /** Reads TENANTS (a JSON array of Tenant) and adds the dev seed when DEV_SEED=true. */
  static fromEnv(env: { TENANTS?: string; DEV_SEED?: string }): TenantRegistry {
    const configured = parseSecretList('TENANTS', env.TENANTS, TenantSchema);
    const all = [...(env.DEV_SEED === 'true' ? DEV_TENANTS : []), ...configured];
    refuseDuplicates('TENANTS', all, (t) => t.id, 'tenant id (or one of the dev seed)');
    refuseDuplicates('TENANTS', all, (t) => t.apiKeySha256, 'API key');
    return new TenantRegistry(all);
  }

  get(id: string): Tenant | undefined {
    return this.byId.get(id);
  }

  all(): Tenant[] {
    return [...this.byId.values()];
  }

  /**
   * The tenant whose API key this is, looked up by the key's SHA-256 (one hash and one map read per request, however
   * many tenants). The lookup's timing can tell at most how a caller's digest compares with a stored one, and a
   * digest does not lead back to a key; the constant-time compare against every tenant it replaces cost a hash
   * decode per tenant per request.
   */
  byApiKey(key: string): Tenant | undefined {
    return this.byKeyHash.get(hashApiKey(key));
  }
}

/**
 * The PSP accounts of the tenants, from TENANT_PSP_CREDENTIALS (a JSON array of PspCredentials, a secret mounted
 * in the payment service only) and, in dev, the seed. One account per tenant.
 */
export class PspCredentialRegistry {
  private readonly byTenant = new Map<string, PspCredentials>();
  private readonly byAccount = new Map<string, PspCredentials>();
  private readonly bySecretKeyHash = new Map<string, PspCredentials>();

  constructor(credentials: PspCredentials[]) {
    const parsed = credentials.map((c) => PspCredentialsSchema.parse(c));
    refuseDuplicates('PSP credentials', parsed, (c) => c.tenantId, 'tenant id');
    refuseDuplicates('PSP credentials', parsed, (c) => c.accountId, 'account id');
    refuseDuplicates('PSP credentials', parsed, (c) => c.secretKey, 'secret key');
    for (const c of parsed) {
      this.byTenant.set(c.tenantId, c);
      this.byAccount.set(c.accountId, c);
      this.bySecretKeyHash.set(hashApiKey(c.secretKey), c);
    }
  }

  /** Reads TENANT_PSP_CREDENTIALS and adds the dev seed's accounts when DEV_SEED=true. */
  static fromEnv(env: { TENANT_PSP_CREDENTIALS?: string; DEV_SEED?: string }): PspCredentialRegistry {
    const configured = parseSecretList(
      'TENANT_PSP_CREDENTIALS',
      env.TENANT_PSP_CREDENTIALS,
      PspCredentialsSchema,
    );
    const all = [...(env.DEV_SEED === 'true' ? DEV_PSP_CREDENTIALS : []), ...configured];
    refuseDuplicates('TENANT_PSP_CREDENTIALS', all, (c) => c.tenantId, 'tenant id (or one of the dev seed)');
    refuseDuplicates('TENANT_PSP_CREDENTIALS', all, (c) => c.accountId, 'account id');
    refuseDuplicates('TENANT_PSP_CREDENTIALS', all, (c) => c.secretKey, 'secret key');
    return new PspCredentialRegistry(all);
  }

  forTenant(tenantId: string): PspCredentials | undefined {
    return this.byTenant.get(tenantId);
  }

  forAccount(accountId: string): PspCredentials | undefined {
    return this.byAccount.get(accountId);
  }

  /** The account whose secret key this is (the PSP side), looked up by its SHA-256 as byApiKey looks up a tenant. */
  bySecretKey(key: string): PspCredentials | undefined {
    return this.bySecretKeyHash.get(hashApiKey(key));
  }

  all(): PspCredentials[] {
    return [...this.byAccount.values()];
  }
}

/** A request after TenantGuard: the tenant comes from the API key, never from a header the caller picks. */
export interface TenantRequest extends FastifyRequest {
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
      throw new DomainError(
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
