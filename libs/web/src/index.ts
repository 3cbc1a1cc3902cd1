export * from './web.module';
export { buildPageAssets, loadPageAssets, pageAssetLocations } from './assets/page-assets';
