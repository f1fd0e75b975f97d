import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { normaliseDocument } from '../../../core/api';
import { runConvert } from '../../../starter/commands/convert';
import { runValidate } from '../../../starter/commands/validate';
import { SEEDS } from './helpers';

function run(command: typeof runConvert, files: Record<string, string>) {
  let stdout = '';
  let stderr = '';
  const code = command(Object.keys(files), {
    readText: (file) => {
      const text = files[file];
      if (text === undefined) throw new Error(`ENOENT: ${file}`);
      return text;
    },
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
  });
  return { code, stdout, stderr };
}

const seed = (file: string) => readFileSync(join(SEEDS, file), 'utf8');

describe('autonode validate', () => {
  it('accepts the AWS seeds', () => {
    const { code, stdout } = run(runValidate, { '000.yaml': seed('000-hypershift-nodepool-and-nodeclass.yaml'), '004.yaml': seed('004-provisioner.yaml') });
    expect(code).toBe(0);
    expect(stdout).toBe('3 valid, 0 invalid, 0 skipped (not Karpenter kinds)\n');
  });

  it('exits 1 naming the file, document, field, value and fix; later documents are still checked', () => {
    const bad = seed('000-hypershift-nodepool-and-nodeclass.yaml').replace('operator: Gt', 'operator: Greater');
    const { code, stdout, stderr } = run(runValidate, { 'bad.yaml': bad });
    expect(code).toBe(1);
    expect(stderr).toContain(
      'error: bad.yaml, document 1 (NodePool spot-example, line 1): spec.template.spec.requirements[4].operator: not one of the allowed values (got "Greater"). Fix: use one of: In, NotIn',
    );
    expect(stdout).toBe('1 valid, 1 invalid, 0 skipped (not Karpenter kinds)\n');
  });

  it('refuses the AKS NodePool, naming its sku-family requirement and the EC2 label to use instead', () => {
    const { code, stderr, stdout } = run(runValidate, { 'aks.yaml': seed('002-aks-nodepool.yaml') });
    expect(code).toBe(1);
    expect(stderr).toContain(
      'error: aks.yaml, document 1 (NodePool general-purpose, line 1): spec.template.spec.requirements[3].key: karpenter.azure.com/sku-family is another provider\'s label',
    );
    expect(stderr).toMatch(/\(got "karpenter\.azure\.com\/sku-family"\)\. Fix: replace it with karpenter\.k8s\.aws\/instance-category/);
    expect(stdout).toBe('0 valid, 1 invalid, 0 skipped (not Karpenter kinds)\n');
  });

  it('reports the AKSNodeClass as unsupported by this provider', () => {
    const { code, stderr } = run(runValidate, { 'aks.yaml': seed('002-aks-nodeclass.yaml') });
    expect(code).toBe(1);
    expect(stderr).toMatch(/unsupported by this provider \(AWS\)/);
  });
});

describe('autonode convert', () => {
  it('prints v1 YAML that normalises to the same objects, with warnings on stderr', () => {
    const { code, stdout, stderr } = run(runConvert, { '004.yaml': seed('004-provisioner.yaml') });
    expect(code).toBe(0);
    const docs = parseAllDocuments(stdout).map((d) => d.toJS() as unknown);
    expect(docs.map((d) => normaliseDocument(d).status)).toEqual(['ok', 'ok']);
    expect(stdout).toMatch(/^apiVersion: karpenter\.sh\/v1\nkind: NodePool\n/);
    expect(stdout).toContain('---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\n');
    expect(stderr).toMatch(/^warning: 004\.yaml, document 1 \(Provisioner default, line 1\): /m);
  });

  it('moves v1beta1 NodePool kubelet settings into the EC2NodeClass converted with it', () => {
    const withKubelet = seed('000-hypershift-nodepool-and-nodeclass.yaml').replace('      nodeClassRef:', '      kubelet:\n        maxPods: 250\n      nodeClassRef:');
    const { code, stdout } = run(runConvert, { 'k.yaml': withKubelet });
    expect(code).toBe(0);
    expect(stdout).not.toContain('compatibility.karpenter.sh');
    expect(stdout).toContain('kubelet:\n    maxPods: 250\n');
  });

  it('passes other kinds through and exits 1 on an unreadable file', () => {
    const { code, stdout, stderr } = run(runConvert, { 'pod.yaml': 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n' });
    expect(code).toBe(0);
    expect(stdout).toBe('apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n');
    expect(stderr).toBe('');
    expect(runConvert(['missing.yaml'], { readText: () => { throw new Error('ENOENT'); }, stdout: () => {}, stderr: () => {} })).toBe(1);
  });
});
