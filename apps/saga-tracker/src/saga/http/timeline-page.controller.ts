import { Controller, Get, Header, Param } from '@nestjs/common';
import { OrderId } from '@checkout/contracts';
import { validate } from '@checkout/service-kit';
import { PAGE_CSS, PAGE_HTML, PAGE_SCRIPT } from './timeline-page';

/** Only our own script, styles and API: the page runs no inline code and loads nothing from elsewhere. */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/**
 * The timeline page (GET /sagas/{orderId}) and the stuck list (GET /sagas), for people on call. The HTML and
 * script hold no data and need no key; the script reads the tenant key from the URL fragment (#key=...) and
 * calls the tenant-scoped API with it.
 */
@Controller()
export class TimelinePageController {
  @Get('sagas')
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Content-Security-Policy', CSP)
  @Header('Cache-Control', 'no-store')
  @Header('Referrer-Policy', 'no-referrer')
  @Header('X-Content-Type-Options', 'nosniff')
  list(): string {
    return PAGE_HTML;
  }

  @Get('sagas/:orderId')
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Content-Security-Policy', CSP)
  @Header('Cache-Control', 'no-store')
  @Header('Referrer-Policy', 'no-referrer')
  @Header('X-Content-Type-Options', 'nosniff')
  saga(@Param('orderId') orderId: string): string {
    validate(OrderId, orderId, 'orderId');
    return PAGE_HTML;
  }

  @Get('assets/saga-timeline.js')
  @Header('Content-Type', 'text/javascript; charset=utf-8')
  @Header('X-Content-Type-Options', 'nosniff')
  script(): string {
    return PAGE_SCRIPT;
  }

  @Get('assets/saga-timeline.css')
  @Header('Content-Type', 'text/css; charset=utf-8')
  @Header('X-Content-Type-Options', 'nosniff')
  styles(): string {
    return PAGE_CSS;
  }
}
