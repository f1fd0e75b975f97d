import { X509Certificate, createPrivateKey } from 'node:crypto';
import { createCertificateAuthority, issueCertificate } from '../../../dev/stack/certs';

describe('local stack certificates', () => {
  it('issues a serving certificate that verifies against its CA and names localhost and 127.0.0.1', async () => {
    const ca = await createCertificateAuthority({ cn: 'envtest-environment', o: ['envtest'] });
    const leaf = await issueCertificate(ca, { subject: { cn: 'localhost' }, usage: 'server', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
    const caCert = new X509Certificate(ca.certPem);
    const cert = new X509Certificate(leaf.certPem);
    expect(caCert.ca).toBe(true);
    expect(cert.ca).toBe(false);
    expect(cert.verify(caCert.publicKey)).toBe(true);
    expect(cert.checkHost('localhost')).toBe('localhost');
    expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(cert.checkHost('example.com')).toBeUndefined();
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']); // serverAuth only
  });

  it('issues client certificates whose subject carries the user (CN) and groups (O)', async () => {
    const ca = await createCertificateAuthority({ cn: 'client-ca' });
    const other = await createCertificateAuthority({ cn: 'other-ca' });
    const leaf = await issueCertificate(ca, { subject: { cn: 'admin', o: ['system:masters', 'extra'] }, usage: 'client' });
    const cert = new X509Certificate(leaf.certPem);
    expect(cert.subject.split('\n')).toEqual(['CN=admin', 'O=system:masters', 'O=extra']);
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']); // clientAuth only
    expect(cert.verify(new X509Certificate(ca.certPem).publicKey)).toBe(true);
    expect(cert.verify(new X509Certificate(other.certPem).publicKey)).toBe(false);
  });

  it('writes PKCS#8 ECDSA P-256 keys that match their certificates', async () => {
    const ca = await createCertificateAuthority({ cn: 'ca' });
    const leaf = await issueCertificate(ca, { subject: { cn: 'x' }, usage: 'client' });
    expect(leaf.keyPem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    const key = createPrivateKey(leaf.keyPem);
    expect(key.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect(new X509Certificate(leaf.certPem).checkPrivateKey(key)).toBe(true);
  });
});
