import { GetQueueUrlCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { type Command } from 'commander';
import { readFileSync } from 'node:fs';
import { staticCredentialsProvider } from '../activities/cloud';
import { parseProviderId } from '../activities/cloud/provider-id';
import { createSqsClientFactory } from '../activities/interruption/sqs';
import { kubeClientsFromKubeconfigFile } from '../activities/kube/clients';
import { NodeClaimStore } from '../activities/kube/nodeclaims';
import { DEV_INTERRUPTION_QUEUE } from './autonode/environment';
import { aRebalanceRecommendation, aScheduledChange, aSpotInterruption, aStateChange, body } from './interruption-events';
import { StackInfoSchema } from './stack/types';

const KINDS = {
  spot: (id: string, o: { time: string; region: string }) => aSpotInterruption(id, o),
  rebalance: (id: string, o: { time: string; region: string }) => aRebalanceRecommendation(id, o),
  health: (id: string, o: { time: string; region: string }) => aScheduledChange([id], o),
  stopping: (id: string, o: { time: string; region: string }) => aStateChange(id, 'stopping', o),
  terminated: (id: string, o: { time: string; region: string }) => aStateChange(id, 'terminated', o),
} as const;

/**
 * `autonode interrupt <nodeclaim>` (local stack only): plays EventBridge — sends the event
 * AWS would send for the NodeClaim's instance into the dev cluster's interruption queue on
 * moto, where the cluster's interruption workflow picks it up.
 */
export function registerInterruptCommand(program: Command): void {
  program
    .command('interrupt <nodeclaim>')
    .description("local stack only: send an EventBridge interruption event for a NodeClaim's instance into the dev cluster's SQS queue (moto)")
    .requiredOption('--stack-file <path>', 'the stack file `autonode dev` printed')
    .option('--kind <kind>', `${Object.keys(KINDS).join(', ')} (spot interruption warning, rebalance recommendation, AWS Health scheduled change, instance state change)`, 'spot')
    .option('--queue <name>', 'the interruption queue', DEV_INTERRUPTION_QUEUE)
    .action(async (name: string, opts: { stackFile: string; kind: string; queue: string }) => {
      const event = KINDS[opts.kind as keyof typeof KINDS];
      if (!event) throw new Error(`--kind ${opts.kind}: one of ${Object.keys(KINDS).join(', ')}`);
      const stack = StackInfoSchema.parse(JSON.parse(readFileSync(opts.stackFile, 'utf8')));
      const claim = await new NodeClaimStore(kubeClientsFromKubeconfigFile(stack.guest.kubeconfigPath)).get(name);
      if (!claim?.status?.providerID) throw new Error(`NodeClaim ${name} ${claim ? 'has launched no instance yet' : 'not found'} (kubectl get nodeclaims)`);
      const instanceId = parseProviderId(claim.status.providerID).instanceId;
      // moto's keys, not AWS credentials; loopback only
      const sqs = createSqsClientFactory({ endpoint: stack.ec2.endpoint, credentialsFor: staticCredentialsProvider({ accessKeyId: 'testing', secretAccessKey: 'testing' }), endpointPolicy: 'loopback-only' })({ name: 'dev', region: stack.ec2.region });
      try {
        const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: opts.queue }));
        await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: body(event(instanceId, { time: new Date().toISOString(), region: stack.ec2.region })) }));
      } finally {
        sqs.destroy();
      }
      process.stdout.write(`sent a ${opts.kind} event for NodeClaim ${name} (${instanceId}) to ${opts.queue}\n`);
    });
}
