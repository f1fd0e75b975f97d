export * from './identity';
export * from './kubelet';
export * from './fleet';
export * from './node-object';
export * from './resources';
export { CsrRejectedError, submitCsr, waitForCertificate } from './csr-requests';
export { bootstrapCsrName, createCsrPem, generateKubeletKey, type CsrSubject, type KubeletKey } from './pki';
export * from './boot';
