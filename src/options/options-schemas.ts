import { Type } from 'typebox';

const Option = Type.Object({ code: Type.String(), name: Type.String() });

const list = (description: string) => Type.Array(Option, { description });

export const OptionsEnvelope = Type.Object({
  data: Type.Object({
    countries: list('ISO 3166-1 alpha-2 countries (residence_country).'),
    provinces: Type.Record(Type.String(), Type.Array(Option), {
      description:
        'ISO 3166-2 subdivisions (residence_province) keyed by country code; countries without any are absent.',
    }),
    languages: Type.Array(
      Type.Object({ code: Type.String(), name: Type.String(), native_name: Type.String() }),
      { description: 'ISO 639-1 languages (language_primary, language_others).' },
    ),
    gender: list('gender'),
    marital_status: list('marital_status'),
    education: list('education'),
    employment_status: list('employment_status'),
    employment_industry: Type.Array(
      Type.Object({
        code: Type.Integer({
          description: "The value to send: the sector's (first) two-digit NAICS number.",
        }),
        naics: Type.String({ description: 'The sector as NAICS writes it, e.g. "31-33".' }),
        name: Type.String(),
      }),
      { description: 'NAICS sectors (employment_industry).' },
    ),
    household_income: list('household_income'),
    timezones: Type.Array(Type.String(), { description: 'IANA time zones (sub-client timezone).' }),
  }),
});
export type OptionsEnvelope = Type.Static<typeof OptionsEnvelope>;
