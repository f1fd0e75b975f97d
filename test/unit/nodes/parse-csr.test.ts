import { type V1CertificateSigningRequest } from '@kubernetes/client-node';
import { InvalidCsrError, csrState, parseCsr } from '../../../activities/kube/csr-parse';
import { createCsrPem, generateKubeletKey, type CsrSubject } from '../../../starter/simkubelet/pki';

async function aCsrObject(subject: CsrSubject, overrides: Partial<V1CertificateSigningRequest['spec']> = {}): Promise<V1CertificateSigningRequest> {
  const pem = await createCsrPem(await generateKubeletKey(), subject);
  return {
    metadata: { name: 'csr-abc12', creationTimestamp: new Date('2026-05-01T10:01:00Z') },
    spec: {
      request: Buffer.from(pem).toString('base64'),
      signerName: 'kubernetes.io/kubelet-serving',
      username: 'system:node:ip-10-0-1-5.ec2.internal',
      groups: ['system:nodes', 'system:authenticated'],
      usages: ['digital signature', 'server auth'],
      ...overrides,
    },
  };
}

describe('parseCsr', () => {
  it('reads subject and every kind of SAN from the PKCS#10 request, the rest from the object', async () => {
    const obj = await aCsrObject({
      commonName: 'system:node:ip-10-0-1-5.ec2.internal',
      organizations: ['system:nodes', 'extra'],
      dnsNames: ['ip-10-0-1-5.ec2.internal'],
      ipAddresses: ['10.0.1.5'],
      emailAddresses: ['a@example.com'],
      uris: ['spiffe://cluster/ns/x'],
    });
    expect(parseCsr(obj)).toEqual({
      name: 'csr-abc12',
      signerName: 'kubernetes.io/kubelet-serving',
      username: 'system:node:ip-10-0-1-5.ec2.internal',
      groups: ['system:nodes', 'system:authenticated'],
      usages: ['digital signature', 'server auth'],
      subject: { commonName: 'system:node:ip-10-0-1-5.ec2.internal', organizations: ['system:nodes', 'extra'] },
      dnsNames: ['ip-10-0-1-5.ec2.internal'],
      ipAddresses: ['10.0.1.5'],
      emailAddresses: ['a@example.com'],
      uris: ['spiffe://cluster/ns/x'],
      otherNames: [],
      createdAt: Date.parse('2026-05-01T10:01:00Z'),
    });
  });

  it('accepts a raw JSON object (timestamps as strings) and a request without SANs', async () => {
    const obj = await aCsrObject({ commonName: 'system:node:n', organizations: ['system:nodes'] });
    const raw: unknown = JSON.parse(JSON.stringify(obj));
    const parsed = parseCsr(raw);
    expect(parsed).toMatchObject({ dnsNames: [], ipAddresses: [], createdAt: Date.parse('2026-05-01T10:01:00Z') });
  });

  it('refuses a request that is not PKCS#10, and an object without a signer, with a typed error', async () => {
    const obj = await aCsrObject({ commonName: 'system:node:n', organizations: [] });
    expect(() => parseCsr({ ...obj, spec: { ...obj.spec, request: Buffer.from('not a csr').toString('base64') } })).toThrow(InvalidCsrError);
    expect(() => parseCsr({ ...obj, spec: { ...obj.spec, signerName: '' } })).toThrow(/csr-abc12 is malformed/);
  });

  it('reads the state from the conditions: Denied or Failed wins, Approved needs a certificate to be issued', () => {
    const withStatus = (status: V1CertificateSigningRequest['status']) => ({ metadata: {}, spec: { request: '', signerName: 'x' }, status });
    expect(csrState(withStatus(undefined))).toEqual({ phase: 'pending' });
    expect(csrState(withStatus({ conditions: [{ type: 'Approved', status: 'True', reason: 'AutoNodeApproved', message: 'ok' }] }))).toEqual({ phase: 'approved', issued: false, reason: 'AutoNodeApproved', message: 'ok' });
    expect(csrState(withStatus({ conditions: [{ type: 'Approved', status: 'True' }], certificate: 'Y2VydA==' }))).toMatchObject({ phase: 'approved', issued: true });
    expect(csrState(withStatus({ conditions: [{ type: 'Approved', status: 'True' }, { type: 'Failed', status: 'True', reason: 'SignerValidationFailure', message: 'bad' }] }))).toEqual({ phase: 'failed', reason: 'SignerValidationFailure', message: 'bad' });
    expect(csrState(withStatus({ conditions: [{ type: 'Denied', status: 'True', reason: 'AutoNodeDenied', message: 'usages: …' }] }))).toMatchObject({ phase: 'denied' });
  });
});
