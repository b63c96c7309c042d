export * from './record-notification/record-notification.handler';
export * from './send-notifications/notification.transport';
export * from './send-notifications/send-notifications.handler';
