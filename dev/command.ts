import { type Command } from 'commander';
import { startDevAutonode, type DevAutonode } from './autonode/environment';
import { startStack, type LocalStack } from './stack/launcher';
import { freePortsFor } from './stack/ports';

/**
 * `autonode dev`: the whole local stack on 127.0.0.1 (what `npm start` runs). Prints where
 * everything is, runs until Ctrl-C, then stops exactly what it started.
 */
export function registerDevCommand(program: Command): void {
  program
    .command('dev')
    .description('run the local stack (etcd, management + guest kube-apiservers, controller-manager, scheduler, kwok, moto, Temporal) until Ctrl-C')
    .option('--dir <dir>', 'directory for certificates, kubeconfigs and logs (default: a new temp dir)')
    .option('--exit-after-start', 'stop again as soon as everything is up (a smoke check)')
    .option('--no-autonode', 'only the stack: no workers, watch workflow or simulated kubelets')
    .option('--no-payload-encryption', 'keep workflow payloads in the clear (default: encrypted with a key generated into the stack dir, decoded in the UI by a codec server)')
    .action(async (opts: { dir?: string; exitAfterStart?: boolean; autonode: boolean; payloadEncryption: boolean }) => {
      const t0 = Date.now();
      const say = (line: string) => process.stdout.write(`[autonode dev] ${line}\n`);
      say('starting the local stack…');
      // the codec server's port is chosen first: the dev server's UI is started pointing at it
      const codecPort = opts.autonode && opts.payloadEncryption ? (await freePortsFor(['codec'])).codec : undefined;
      const stack = await startStack({ dir: opts.dir, log: say, ...(codecPort !== undefined ? { temporalUiCodecEndpoint: `http://127.0.0.1:${codecPort}` } : {}) });
      let autonode: DevAutonode | undefined;
      const stopOnce = stopOnSignals(stack, say, async () => autonode?.stop());
      const { info } = stack;
      if (opts.autonode) autonode = await startDevAutonode(info, say, codecPort !== undefined ? { codecPort } : {});
      const codec = autonode?.payloadCodec;
      // every Temporal client below must read encrypted payloads: the starter through the keyring, the temporal CLI through the codec server
      const codecFlag = codec ? ` --codec-endpoint ${codec.endpoint}` : '';
      say(`ready in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
      process.stdout.write(
        [
          '',
          `  Temporal        ${info.temporal.address} (namespace ${info.temporal.namespace})`,
          `  Temporal UI     ${info.temporal.uiUrl ?? '(external server)'}`,
          `  guest cluster   KUBECONFIG=${info.guest.kubeconfigPath}`,
          `  management      KUBECONFIG=${info.management.kubeconfigPath}`,
          `  EC2 (moto)      AWS_ENDPOINT_URL_EC2=${info.ec2.endpoint} AWS_REGION=${info.ec2.region}`,
          `  logs            ${info.dir}/logs`,
          `  stack file      ${stack.infoFile}`,
          ...(codec
            ? [
                `  payloads        encrypted (AES-256-GCM); keyring ${codec.keysFile}`,
                `  codec server    ${codec.endpoint} (${info.temporal.uiUrl ? "the UI decodes through it" : "for the temporal CLI; another UI needs `autonode codec-server --allowed-origin <its URL>`"})`,
              ]
            : []),
          '',
          ...(autonode
            ? [
                `  AutoNode is enabled for HostedCluster ${autonode.hostedCluster} (infraID ${autonode.cluster.name}) through the starter;`,
                `  seed 000's NodePool "${autonode.nodePoolName}" and EC2NodeClass "${autonode.nodeClassName}" are applied. Try:`,
                `    export TEMPORAL_ADDRESS=${info.temporal.address}`,
                ...(codec ? [`    export AUTONODE_PAYLOAD_KEYS_FILE=${codec.keysFile}   # the workers encrypt payloads: the starter needs their keys`] : []),
                `    npx autonode status --kubeconfig ${info.management.kubeconfigPath}                 # clusters, nodes, claims, vCPUs`,
                `    npx autonode status ${autonode.hostedCluster} --kubeconfig ${info.management.kubeconfigPath}   # its steps`,
                `    kubectl --kubeconfig ${info.guest.kubeconfigPath} get nodeclaims,nodes -o wide`,
                `    kubectl --kubeconfig ${info.guest.kubeconfigPath} scale deployment inflate --replicas 30   # more pods, more nodes`,
                `    kubectl --kubeconfig ${info.guest.kubeconfigPath} get nodepools`,
                `    kubectl --kubeconfig ${info.guest.kubeconfigPath} scale deployment inflate small --replicas 0   # empty nodes go (disruption, 10% at a time)`,
                `    temporal workflow query --address ${info.temporal.address} -w autonode/${autonode.cluster.name}/disruption --type status${codecFlag}`,
                `    kubectl --kubeconfig ${info.guest.kubeconfigPath} get events -A --field-selector source=karpenter`,
                `    curl -s ${autonode.metricsUrl}/metrics | grep ^karpenter_   # Karpenter's metric names (docs/metrics.md)`,
                `    kubectl --kubeconfig ${info.management.kubeconfigPath} get hostedclusters -n clusters -o yaml   # conditions, status.autoNode`,
                `    temporal workflow query --address ${info.temporal.address} -w autonode/${autonode.cluster.name}/provisioner --type status${codecFlag}`,
                `    npx autonode interrupt <nodeclaim> --kind spot --stack-file ${stack.infoFile}   # EventBridge's spot warning (also rebalance, health, stopping, terminated)`,
                `    temporal workflow query --address ${info.temporal.address} -w autonode/${autonode.cluster.name}/interruption --type status${codecFlag}`,
                `    npx autonode disable ${autonode.hostedCluster} --wait --kubeconfig ${info.management.kubeconfigPath}   # every node drained and terminated`,
                '',
              ]
            : []),
          '  Ctrl-C stops everything.',
          '',
        ].join('\n'),
      );
      if (opts.exitAfterStart) await stopOnce();
    });
}

/** Stops the stack on SIGINT/SIGTERM, and kills what is left if the process exits anyway. */
export function stopOnSignals(stack: LocalStack, say: (line: string) => void, before: () => Promise<void> = async () => undefined): () => Promise<void> {
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      say('stopping…');
      await before().catch((err: unknown) => say(`stopping autonode: ${err instanceof Error ? err.message : String(err)}`));
      await stack.stop();
      say('stopped');
    })();
    return stopping;
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void stop().then(() => process.exit(130));
    });
  }
  process.once('exit', () => stack.killNow());
  return stop;
}
