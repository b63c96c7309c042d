import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { SERVICE_CONFIG } from '@checkout/service-kit';
import { OrderConfig } from '../../../config/order.config';
import { OrderStockGate } from '../../../gate/stock-gate.provider';
import { CatalogRepository, FlashSale } from '../../database/catalog.repository';
import { MarkAnsweredCheckoutsHandler } from '../mark-answered-checkouts/mark-answered-checkouts.handler';
import { GateUnavailable, InventoryUnavailable, NoStockRecord } from '../../domain/catalog.errors';

/** Turn the gate on (primed from inventory, or from an explicit figure) or off for one SKU. */
export interface SetFlashSaleCommand {
  tenantId: string;
  sku: string;
  enabled: boolean;
  /** Explicit units to prime the gate with, instead of asking inventory. */
  available?: number;
  /** The caller's Authorization header: inventory is asked in the same tenant's context. */
  authorization: string;
}

/**
 * SetFlashSale: primes the Redis gate from inventory's available stock (`GET /v1/stock/{sku}`) or from the
 * explicit `available` override, and records the flash sale. Turning it off deletes the gate's counter.
 */
@Injectable()
export class SetFlashSaleHandler {
  constructor(
    private readonly dataSource: DataSource,
    private readonly catalog: CatalogRepository,
    private readonly gate: OrderStockGate,
    private readonly markAnswered: MarkAnsweredCheckoutsHandler,
    @Inject(SERVICE_CONFIG) private readonly config: OrderConfig,
  ) {}

  async execute(cmd: SetFlashSaleCommand): Promise<FlashSale & { available: number | null }> {
    if (!cmd.enabled) {
      const off = await this.gate.gate.disable(cmd.tenantId, cmd.sku);
      if (off.outcome === 'GateUnavailable') throw new GateUnavailable(off.reason);
      const sale = await this.catalog.putFlashSale(
        this.dataSource,
        cmd.tenantId,
        cmd.sku,
        false,
        cmd.available === undefined ? 'inventory' : 'override',
        null,
      );
      return { ...sale, available: null };
    }
    const source = cmd.available === undefined ? 'inventory' : 'override';
    const available = cmd.available ?? (await this.availableInInventory(cmd.sku, cmd.authorization));
    // Turning the gate on: the retries of the SKU's earlier orders must be known as answered first.
    if ((await this.gate.gate.remaining(cmd.tenantId, cmd.sku)) === null) {
      const marked = await this.markAnswered.execute(cmd.tenantId, { sku: cmd.sku });
      if (typeof marked !== 'number') throw new GateUnavailable(marked.reason);
    }
    const on = await this.gate.gate.enable(cmd.tenantId, cmd.sku, available);
    if (on.outcome === 'GateUnavailable') throw new GateUnavailable(on.reason);
    const sale = await this.catalog.putFlashSale(
      this.dataSource,
      cmd.tenantId,
      cmd.sku,
      true,
      source,
      available,
    );
    return { ...sale, available };
  }

  /** Inventory's available units of the SKU, read with the caller's API key. */
  private async availableInInventory(sku: string, authorization: string): Promise<number> {
    let res: Response;
    try {
      res = await fetch(`${this.config.INVENTORY_URL}/v1/stock/${encodeURIComponent(sku)}`, {
        headers: { authorization, accept: 'application/json' },
        signal: AbortSignal.timeout(this.config.INVENTORY_TIMEOUT_MS),
      });
    } catch (error) {
      throw new InventoryUnavailable(`inventory could not be asked for ${sku}: ${(error as Error).message}`);
    }
    const body = (await res.json().catch(() => undefined)) as
      { available?: unknown; message?: unknown } | undefined;
    // A 404 of the route itself (inventory without this endpoint) is not an unknown SKU.
    const routeMissing = typeof body?.message === 'string' && body.message.startsWith('Cannot GET');
    if (res.status === 404 && !routeMissing) {
      throw new NoStockRecord(sku);
    }
    if (!res.ok || typeof body?.available !== 'number') {
      throw new InventoryUnavailable(`inventory answered ${res.status} for ${sku}`);
    }
    return body.available;
  }
}
