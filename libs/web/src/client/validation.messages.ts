import type { ValidationTexts } from './field-messages';
import type { Locale } from './locale';

export const VALIDATION: Record<Locale, ValidationTexts> = {
  en: {
    atLeast: 'Must be at least {limit}.',
    atMost: 'Must be at most {limit}.',
    wholeNumber: 'Enter a number.',
    tooWide: 'Together the components are {total} wide, more than the window ({width}).',
    tooTall: 'Can be at most as tall as the window ({height}).',
    chooseFrom: 'Choose an option from “{group}”.',
    onlyOne: 'Choose only one option from “{group}”.',
    required: 'This field is required.',
    email: 'Enter a valid e-mail address.',
    phone: 'A phone number may hold digits, spaces, a leading + and ( ) . / -.',
    tooLong: 'At most {max} characters.',
  },
  de: {
    atLeast: 'Mindestens {limit}.',
    atMost: 'Höchstens {limit}.',
    wholeNumber: 'Bitte eine Zahl eingeben.',
    tooWide: 'Die Elemente sind zusammen {total} breit, breiter als das Fenster ({width}).',
    tooTall: 'Höchstens so hoch wie das Fenster ({height}).',
    chooseFrom: 'Bitte eine Option aus „{group}“ wählen.',
    onlyOne: 'Nur eine Option aus „{group}“ wählen.',
    required: 'Pflichtfeld.',
    email: 'Bitte eine gültige E-Mail-Adresse eingeben.',
    phone: 'Eine Telefonnummer darf Ziffern, Leerzeichen, ein führendes + und ( ) . / - enthalten.',
    tooLong: 'Höchstens {max} Zeichen.',
  },
  nl: {
    atLeast: 'Minimaal {limit}.',
    atMost: 'Maximaal {limit}.',
    wholeNumber: 'Vul een getal in.',
    tooWide: 'Samen zijn de onderdelen {total} breed, breder dan het raam ({width}).',
    tooTall: 'Maximaal zo hoog als het raam ({height}).',
    chooseFrom: 'Kies een optie uit „{group}”.',
    onlyOne: 'Kies maar één optie uit „{group}”.',
    required: 'Dit veld is verplicht.',
    email: 'Vul een geldig e-mailadres in.',
    phone: 'Een telefoonnummer mag cijfers, spaties, een + aan het begin en ( ) . / - bevatten.',
    tooLong: 'Maximaal {max} tekens.',
  },
};
