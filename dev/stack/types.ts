import { z } from 'zod';

/** A kube-apiserver the stack started, and how to reach it as cluster admin. */
export const ClusterEndpointSchema = z.object({
  name: z.string(),
  server: z.string().url(),
  kubeconfigPath: z.string(),
  /** etcd key prefix: both clusters share one etcd. */
  etcdPrefix: z.string(),
  /** the API server's audit log (ServiceAccounts' requests, Metadata level), when it keeps one */
  auditLogPath: z.string().optional(),
});
export type ClusterEndpoint = z.infer<typeof ClusterEndpointSchema>;

/**
 * What a running local stack offers. Written to `<dir>/stack.json` by the launcher and
 * read back by tests (test/support/stack.ts) and `autonode dev`.
 */
export const StackInfoSchema = z.object({
  dir: z.string(),
  temporal: z.object({
    address: z.string(),
    namespace: z.string(),
    uiUrl: z.string().optional(),
    /** false when TEMPORAL_ADDRESS pointed at a server the stack did not start */
    managed: z.boolean(),
    /** the dev server, the production build on PostgreSQL (AUTONODE_TEMPORAL=production), or TEMPORAL_ADDRESS's */
    server: z.enum(['dev', 'production', 'external']).optional(),
    /** the server's Prometheus endpoint (server metrics such as `action`), when the stack started it; the production server's frontend */
    metricsUrl: z.string().url().optional(),
    /** every service's Prometheus endpoint: the production server's frontend, history, matching and worker processes */
    metricsUrls: z.array(z.string().url()).optional(),
  }),
  ec2: z.object({ endpoint: z.string().url(), region: z.string() }),
  management: ClusterEndpointSchema,
  guest: ClusterEndpointSchema.extend({
    /** CA that signs kubelet client certificates (controller-manager's signing CA) */
    clientCaCertPath: z.string(),
    /** CA that signs the API server's serving certificate */
    servingCaCertPath: z.string(),
  }),
});
export type StackInfo = z.infer<typeof StackInfoSchema>;
