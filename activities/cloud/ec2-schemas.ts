/**
 * zod schemas for the parts of EC2 responses we rely on. The SDK's types mark everything
 * optional; parsing here turns "should be there" into "is there, or a clear error".
 */
import { z } from 'zod';

export const TagListSchema = z
  .array(z.object({ Key: z.string(), Value: z.string().optional() }))
  .optional()
  .transform((tags) => Object.fromEntries((tags ?? []).map((t) => [t.Key, t.Value ?? ''])));

export const Ec2InstanceSchema = z.object({
  InstanceId: z.string(),
  InstanceType: z.string(),
  ImageId: z.string(),
  State: z.object({ Name: z.string() }),
  Placement: z.object({ AvailabilityZone: z.string() }),
  LaunchTime: z.date(),
  InstanceLifecycle: z.string().optional(),
  SubnetId: z.string().optional(),
  SecurityGroups: z.array(z.object({ GroupId: z.string() })).optional(),
  PrivateDnsName: z.string().optional(),
  PrivateIpAddress: z.string().optional(),
  NetworkInterfaces: z
    .array(z.object({ PrivateIpAddresses: z.array(z.object({ PrivateIpAddress: z.string().optional() })).optional() }))
    .optional(),
  Tags: TagListSchema,
});
export type Ec2Instance = z.infer<typeof Ec2InstanceSchema>;

export const DescribeInstancesOutputSchema = z.object({
  Reservations: z.array(z.object({ Instances: z.array(Ec2InstanceSchema).optional() })).optional(),
  NextToken: z.string().optional(),
});

export const Ec2SubnetSchema = z.object({
  SubnetId: z.string(),
  AvailabilityZone: z.string(),
  AvailabilityZoneId: z.string().optional(),
  AvailableIpAddressCount: z.number().optional(),
  Tags: TagListSchema,
});
export const DescribeSubnetsOutputSchema = z.object({ Subnets: z.array(Ec2SubnetSchema).optional(), NextToken: z.string().optional() });

export const Ec2SecurityGroupSchema = z.object({ GroupId: z.string(), GroupName: z.string(), Tags: TagListSchema });
export const DescribeSecurityGroupsOutputSchema = z.object({
  SecurityGroups: z.array(Ec2SecurityGroupSchema).optional(),
  NextToken: z.string().optional(),
});

export const Ec2ImageSchema = z.object({
  ImageId: z.string(),
  Name: z.string().optional(),
  OwnerId: z.string().optional(),
  Architecture: z.string().optional(),
  CreationDate: z.string().optional(),
  DeprecationTime: z.string().optional(),
  State: z.string().optional(),
});
export const DescribeImagesOutputSchema = z.object({ Images: z.array(Ec2ImageSchema).optional(), NextToken: z.string().optional() });

export const Ec2LaunchTemplateSchema = z.object({
  LaunchTemplateId: z.string(),
  LaunchTemplateName: z.string(),
  Tags: TagListSchema,
});
export const DescribeLaunchTemplatesOutputSchema = z.object({
  LaunchTemplates: z.array(Ec2LaunchTemplateSchema).optional(),
  NextToken: z.string().optional(),
});
export const CreateLaunchTemplateOutputSchema = z.object({ LaunchTemplate: Ec2LaunchTemplateSchema });

const FleetOverridesSchema = z
  .object({ InstanceType: z.string().optional(), AvailabilityZone: z.string().optional(), SubnetId: z.string().optional() })
  .optional();

export const CreateFleetOutputSchema = z.object({
  FleetId: z.string().optional(),
  Errors: z
    .array(
      z.object({
        ErrorCode: z.string().optional(),
        ErrorMessage: z.string().optional(),
        Lifecycle: z.string().optional(),
        LaunchTemplateAndOverrides: z.object({ Overrides: FleetOverridesSchema }).optional(),
      }),
    )
    .optional(),
  Instances: z
    .array(
      z.object({
        InstanceIds: z.array(z.string()).optional(),
        InstanceType: z.string().optional(),
        Lifecycle: z.string().optional(),
        LaunchTemplateAndOverrides: z.object({ Overrides: FleetOverridesSchema }).optional(),
      }),
    )
    .optional(),
});
export type CreateFleetOutput = z.infer<typeof CreateFleetOutputSchema>;

/**
 * Envelopes of the three instance-type reads. Items stay `unknown` here and are parsed one
 * by one with core/instancetypes' schemas, so one odd entry (a type AWS describes with a
 * field we did not expect) drops that entry with a warning instead of the whole region.
 */
export const DescribeInstanceTypesPageSchema = z.object({
  InstanceTypes: z.array(z.unknown()).optional(),
  NextToken: z.string().optional(),
});
export const DescribeInstanceTypeOfferingsPageSchema = z.object({
  InstanceTypeOfferings: z.array(z.unknown()).optional(),
  NextToken: z.string().optional(),
});
export const DescribeSpotPriceHistoryPageSchema = z.object({
  SpotPriceHistory: z.array(z.unknown()).optional(),
  NextToken: z.string().optional(),
});
