import { Duration, RemovalPolicy, Tags } from 'aws-cdk-lib';
import { AccountRootPrincipal, ArnPrincipal, Effect, PolicyDocument, PolicyStatement, type IRole } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { keyIds, keys, type KeyId, type KeySpec, type KmsAction } from '#functions/secrets';

export interface KeysProps {
  readonly stage: string;
  /** Throwaway stage: the keys go with the stack (after KMS's 7-day wait), as its tables do. */
  readonly ephemeral: boolean;
}

const pascal = (id: string) => id.charAt(0).toUpperCase() + id.slice(1);

/**
 * What the account (its administrators, through IAM) may do with a key: manage it, never use it.
 * No Encrypt, Decrypt, ReEncrypt or GenerateDataKey: those are in the key's policy for the roles
 * of the functions that declare them, and for nobody else. (An administrator who may
 * PutKeyPolicy can still change that policy: the change is a CloudTrail event, docs/security.md.)
 */
export const KEY_ADMINISTRATION = [
  'kms:Create*',
  'kms:Describe*',
  'kms:Enable*',
  'kms:List*',
  'kms:Put*',
  'kms:Update*',
  'kms:Revoke*',
  'kms:Disable*',
  'kms:Get*',
  'kms:Delete*',
  'kms:TagResource',
  'kms:UntagResource',
  'kms:ScheduleKeyDeletion',
  'kms:CancelKeyDeletion',
];

/** The condition of every use of the key: the encryption context its data keys are made with. */
export const encryptionContextCondition = (spec: KeySpec) => ({
  StringEquals: Object.fromEntries(Object.entries(spec.encryptionContext).map(([name, value]) => [`kms:EncryptionContext:${name}`, value])),
});

/**
 * Every key of functions/secrets.ts (`keys`): a customer-managed symmetric KMS key, its key
 * material rotated every year by KMS (older material still decrypts what it encrypted), kept
 * when a production stage's stack is deleted (what it encrypted lives in the retained tables).
 * Its policy lets the account administer it and names each function's role that uses it, with
 * exactly the actions the function's row declares (`grant`), under the key's encryption context.
 */
export class Keys extends Construct {
  readonly byId: Readonly<Record<KeyId, Key>>;

  constructor(scope: Construct, id: string, props: KeysProps) {
    super(scope, id);
    const byId = {} as Record<KeyId, Key>;
    for (const keyId of keyIds) {
      const spec: KeySpec = keys[keyId];
      const key = new Key(this, pascal(keyId), {
        description: `tillgate (${props.stage}): ${spec.description}`,
        enableKeyRotation: true,
        removalPolicy: props.ephemeral ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
        pendingWindow: Duration.days(props.ephemeral ? 7 : 30),
        policy: new PolicyDocument({
          statements: [
            new PolicyStatement({
              sid: 'Administration',
              effect: Effect.ALLOW,
              principals: [new AccountRootPrincipal()],
              actions: KEY_ADMINISTRATION,
              resources: ['*'],
            }),
          ],
        }),
      });
      Tags.of(key).add('tillgate:key', keyId);
      byId[keyId] = key;
    }
    this.byId = byId;
  }

  /** Names `role` in the key's policy with `actions`, under the key's encryption context. */
  grant(keyId: KeyId, role: IRole, actions: readonly KmsAction[]): void {
    this.byId[keyId].addToResourcePolicy(
      new PolicyStatement({
        effect: Effect.ALLOW,
        principals: [new ArnPrincipal(role.roleArn)],
        actions: actions.map((action) => `kms:${action}`),
        resources: ['*'],
        conditions: encryptionContextCondition(keys[keyId]),
      }),
    );
  }
}
