import { describeKeyLoader } from '@lib/shared/testing/key-loader.contract';
import { loadPricingTokenKey, PRICING_TOKEN_KEY_FILE } from './pricing-token-key';

describeKeyLoader('the pricing token key', loadPricingTokenKey, 'PRICING_TOKEN_SECRET', PRICING_TOKEN_KEY_FILE);
