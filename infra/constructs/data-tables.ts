import { RemovalPolicy, Tags } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, StreamViewType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { tableIds, tables, type KeyAttribute, type TableId, type TableSpec } from '#functions/tables';

export interface DataTable {
  readonly id: TableId;
  readonly spec: TableSpec;
  readonly table: Table;
}

export interface DataTablesProps {
  /** Throwaway stage: tables go with the stack and can be deleted. */
  readonly ephemeral: boolean;
}

const attribute = (key: KeyAttribute) => ({
  name: key.name,
  type: key.type === 'N' ? AttributeType.NUMBER : AttributeType.STRING,
});

const pascal = (id: string) => id.charAt(0).toUpperCase() + id.slice(1);

/**
 * Every table of functions/tables.ts. CloudFormation names them (no physical names), so
 * two stages fit in one account. Production tables survive `cdk destroy` and cannot be deleted
 * by accident: they hold the accounts' tokens and records.
 */
export class DataTables extends Construct {
  readonly byId: Readonly<Record<TableId, DataTable>>;

  constructor(scope: Construct, id: string, props: DataTablesProps) {
    super(scope, id);
    const byId = {} as Record<TableId, DataTable>;
    for (const tableId of tableIds) {
      const spec: TableSpec = tables[tableId];
      const table = new Table(this, pascal(tableId), {
        partitionKey: attribute(spec.partitionKey),
        ...(spec.sortKey ? { sortKey: attribute(spec.sortKey) } : {}),
        billingMode: BillingMode.PAY_PER_REQUEST,
        pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
        deletionProtection: !props.ephemeral,
        removalPolicy: props.ephemeral ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
        encryption: TableEncryption.AWS_MANAGED,
        ...(spec.timeToLiveAttribute ? { timeToLiveAttribute: spec.timeToLiveAttribute } : {}),
        ...(spec.stream ? { stream: StreamViewType.NEW_IMAGE } : {}),
      });
      for (const index of spec.indexes ?? []) {
        table.addGlobalSecondaryIndex({
          indexName: index.name,
          partitionKey: attribute(index.partitionKey),
          sortKey: attribute(index.sortKey),
          projectionType: ProjectionType.INCLUDE,
          nonKeyAttributes: [...index.nonKeyAttributes],
        });
      }
      Tags.of(table).add('tillgate:table', tableId);
      byId[tableId] = { id: tableId, spec, table };
    }
    this.byId = byId;
  }
}
