export * from './model-info';
