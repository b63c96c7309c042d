import { describe, it } from '@jest/globals';
import assert from 'node:assert/strict';
import { ConfigError } from './config';
import { DEV_PSP_CREDENTIALS, PspCredentialRegistry, TenantRegistry, hashApiKey } from './tenancy';

const SECRET = 'sk_live_do_not_print_me_0123456789';
const tenant = (id: string, key = `${id}-key`) => ({ id, apiKeySha256: hashApiKey(key) });

/** The message a bad environment fails with. */
function failure(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof ConfigError, `a ConfigError, got ${String(error)}`);
    return error.message;
  }
  assert.fail('expected a ConfigError');
}

describe('TenantRegistry.fromEnv: TENANTS', () => {
  it('reads the tenants and the dev seed', () => {
    const r = TenantRegistry.fromEnv({ TENANTS: JSON.stringify([tenant('initech')]), DEV_SEED: 'true' });
    assert.deepEqual(
      r.all().map((t) => t.id),
      ['acme', 'globex', 'initech'],
    );
    assert.equal(r.byApiKey('initech-key')?.id, 'initech');
  });

  it('finds a tenant by its API key among thousands, and no tenant by a wrong or hashed key', () => {
    const many = Array.from({ length: 5_000 }, (_, i) => tenant(`t${i}`));
    const r = new TenantRegistry(many);
    assert.equal(r.byApiKey('t0-key')?.id, 't0');
    assert.equal(r.byApiKey('t4999-key')?.id, 't4999');
    assert.equal(r.byApiKey('t5000-key'), undefined);
    assert.equal(r.byApiKey(hashApiKey('t7-key')), undefined, 'the stored digest is no credential');
  });

  it('never prints a malformed secret, neither broken JSON nor a bad field', () => {
    const broken = `[{"id":"initech","apiKeySha256":"${SECRET}"`;
    const json = failure(() => TenantRegistry.fromEnv({ TENANTS: broken }));
    assert.ok(!json.includes(SECRET) && !json.includes('initech'), json);
    assert.match(json, /TENANTS is not valid JSON/);
    const field = failure(() =>
      TenantRegistry.fromEnv({ TENANTS: JSON.stringify([{ id: 'initech', apiKeySha256: SECRET }]) }),
    );
    assert.ok(!field.includes(SECRET), field);
    assert.match(field, /TENANTS\[0\]: apiKeySha256 is missing or malformed/);
  });

  it('refuses duplicate tenants (ids or API keys), also against the dev seed', () => {
    const twice = JSON.stringify([tenant('initech'), tenant('initech', 'other')]);
    assert.match(
      failure(() => TenantRegistry.fromEnv({ TENANTS: twice })),
      /TENANTS\[1\]: duplicate tenant id/,
    );
    const sameKey = JSON.stringify([tenant('a', 'k'), tenant('b', 'k')]);
    assert.match(
      failure(() => TenantRegistry.fromEnv({ TENANTS: sameKey })),
      /TENANTS\[1\]: duplicate API key/,
    );
    const seed = JSON.stringify([tenant('acme', 'x')]);
    assert.match(
      failure(() => TenantRegistry.fromEnv({ TENANTS: seed, DEV_SEED: 'true' })),
      /duplicate tenant id/,
    );
  });

  it('refuses PSP secrets in TENANTS (the old format): they belong to payment only', () => {
    const old = JSON.stringify([{ ...tenant('initech'), webhookSecret: SECRET, pspAccount: SECRET }]);
    const message = failure(() => TenantRegistry.fromEnv({ TENANTS: old }));
    assert.match(message, /unexpected field\(s\) webhookSecret, pspAccount/);
    assert.ok(!message.includes(SECRET));
  });
});

describe('PspCredentialRegistry.fromEnv: TENANT_PSP_CREDENTIALS', () => {
  const account = {
    tenantId: 'initech',
    accountId: 'acct_initech',
    secretKey: SECRET,
    webhookSecret: 'whsec_initech_0123456789',
  };

  it('maps tenants, public account ids and secret keys to one another', () => {
    const r = PspCredentialRegistry.fromEnv({ TENANT_PSP_CREDENTIALS: JSON.stringify([account]) });
    assert.equal(r.forTenant('initech')?.accountId, 'acct_initech');
    assert.equal(r.forAccount('acct_initech')?.secretKey, SECRET);
    assert.equal(r.bySecretKey(SECRET)?.accountId, 'acct_initech');
    assert.equal(r.bySecretKey('acct_initech'), undefined, 'the public id is no credential');
  });

  it('is empty without the secret, and has the dev accounts only with DEV_SEED', () => {
    assert.deepEqual(PspCredentialRegistry.fromEnv({}).all(), []);
    assert.deepEqual(PspCredentialRegistry.fromEnv({ DEV_SEED: 'true' }).all(), DEV_PSP_CREDENTIALS);
  });

  it('refuses duplicate accounts and never prints a secret', () => {
    const twice = JSON.stringify([account, { ...account, tenantId: 'other' }]);
    const message = failure(() => PspCredentialRegistry.fromEnv({ TENANT_PSP_CREDENTIALS: twice }));
    assert.match(message, /TENANT_PSP_CREDENTIALS\[1\]: duplicate account id/);
    const short = JSON.stringify([{ ...account, secretKey: 'sk' }]);
    const bad = failure(() => PspCredentialRegistry.fromEnv({ TENANT_PSP_CREDENTIALS: short }));
    assert.match(bad, /secretKey is missing or malformed/);
  });
});
