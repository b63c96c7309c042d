export * from './api';
export * from './saga';
