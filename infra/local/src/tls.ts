import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run } from './processes';

/**
 * TLS on the broker's client listener (`STACK_KAFKA_TLS=true`, alone or with `STACK_KAFKA_SASL=true`): a CA of
 * the stack's own signs the broker's certificate for 127.0.0.1; the broker, Connect and every client trust that
 * CA only. Files are PEM, made once by openssl in `<stack>/kafka/tls`; production mounts its own.
 */
export interface StackTls {
  dir: string;
  /** The CA certificate the clients verify the broker against (`KAFKA_SSL_CA_FILE`). */
  caFile: string;
  /** The broker's PKCS#8 private key followed by its certificate chain (Kafka's PEM keystore). */
  keystoreFile: string;
}

/** The stack's TLS files, or undefined when the broker listener is plaintext (the default). */
export function stackTls(stackDir: string, env: NodeJS.ProcessEnv = process.env): StackTls | undefined {
  if (env.STACK_KAFKA_TLS !== 'true') return undefined;
  const dir = join(stackDir, 'kafka', 'tls');
  return { dir, caFile: join(dir, 'ca.pem'), keystoreFile: join(dir, 'broker-keystore.pem') };
}

/** Makes the CA and the broker's key and certificate (SAN IP:127.0.0.1, 10 years) unless they exist. */
export function ensureBrokerCertificates(tls: StackTls): void {
  if (existsSync(tls.caFile) && existsSync(tls.keystoreFile)) return;
  mkdirSync(tls.dir, { recursive: true, mode: 0o700 });
  const file = (name: string) => join(tls.dir, name);
  const openssl = (...args: string[]) => run('openssl', args, { cwd: tls.dir });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '3650',
    '-subj',
    '/CN=checkout local CA',
    '-keyout',
    file('ca.key'),
    '-out',
    tls.caFile,
  );
  openssl('genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', file('broker.key'));
  openssl('req', '-new', '-key', file('broker.key'), '-subj', '/CN=127.0.0.1', '-out', file('broker.csr'));
  writeFileSync(
    file('broker.ext'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n',
  );
  openssl(
    'x509',
    '-req',
    '-in',
    file('broker.csr'),
    '-CA',
    tls.caFile,
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-days',
    '3650',
    '-extfile',
    file('broker.ext'),
    '-out',
    file('broker.pem'),
  );
  writeFileSync(
    tls.keystoreFile,
    readFileSync(file('broker.key'), 'utf8') + readFileSync(file('broker.pem'), 'utf8'),
    { mode: 0o600 },
  );
}

/** Broker properties of a TLS listener: its key and certificate, and the CA it trusts as a client of itself. */
export function brokerTlsProperties(tls: StackTls | undefined): string[] {
  if (!tls) return [];
  return [
    'ssl.keystore.type=PEM',
    `ssl.keystore.location=${tls.keystoreFile}`,
    'ssl.truststore.type=PEM',
    `ssl.truststore.location=${tls.caFile}`,
  ];
}
