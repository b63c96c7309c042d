// PeriodicTask lives in libs/messaging (the consumer transport's lag probe runs on it); the services import it from here.
export { NextDue, PeriodicTask } from '@checkout/messaging';
