import { plainToInstance } from 'class-transformer';
import { NullablePlainText, PlainText } from './dto-decorators';

class Texts {
  @PlainText() text: string;
  @NullablePlainText() optional: string | null;
}

describe('PlainText and NullablePlainText', () => {
  it('strip markup from a text of up to 50,000 characters', () => {
    const within = `<b>${'x'.repeat(49_993)}</b>`;
    const texts = plainToInstance(Texts, { text: within, optional: '<i></i>' });
    expect([texts.text.length, texts.optional]).toEqual([49_993, null]);
  });

  it('leave a longer text as it is: its length limit refuses it anyway, and stripping it would only cost time', () => {
    const over = `<b>${'&amp;'.repeat(10_000)}</b>`;
    const texts = plainToInstance(Texts, { text: over, optional: over });
    expect([texts.text, texts.optional]).toEqual([over, over]);
  });
});
